// Image reading and resizing for crema.io, by the same OpenCV calls the
// ImageData layer uses, so that Python preprocessing matches training's.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "bindings.hpp"
#include "crema/common.hpp"

#ifdef CREMA_OPENCV
#include <opencv2/imgproc/imgproc.hpp>

#include "crema/util/image_io.hpp"
#endif

namespace py = pybind11;

namespace crema {
namespace python {

#ifdef CREMA_OPENCV
namespace {

// An 8-bit image as a (H, W, C) uint8 array (BGR for colour), copied.
py::array_t<uint8_t> ReadImage(const std::string& filename, bool color) {
  const cv::Mat image = ReadImageToCVMat(filename, color ? ImageColor::kColor : ImageColor::kGray);
  py::array_t<uint8_t> out({image.rows, image.cols, image.channels()});
  const size_t row_bytes = static_cast<size_t>(image.cols) * image.channels();
  for (int row = 0; row < image.rows; ++row) {
    std::copy(image.ptr<uint8_t>(row), image.ptr<uint8_t>(row) + row_bytes,
              out.mutable_data() + row * row_bytes);
  }
  return out;
}

// Bilinear resizing of a (H, W, C) float32 array, C of any size.
py::array_t<float> ResizeImage(py::array_t<float, py::array::c_style | py::array::forcecast> image,
                               int height, int width) {
  CREMA_REQUIRE(image.ndim() == 3,
                "resize_image: an (H, W, C) array, got " << image.ndim() << " dimensions");
  CREMA_REQUIRE(height > 0 && width > 0,
                "resize_image: the new size " << height << "x" << width << " is empty");
  const int channels = static_cast<int>(image.shape(2));
  py::array_t<float> out({height, width, channels});
  // cv::resize handles up to 512 channels at once; one plane at a time takes any count.
  for (int c = 0; c < channels; ++c) {
    cv::Mat in_plane(static_cast<int>(image.shape(0)), static_cast<int>(image.shape(1)), CV_32F);
    for (int i = 0; i < in_plane.rows * in_plane.cols; ++i) {
      in_plane.at<float>(i) = image.data()[i * channels + c];
    }
    cv::Mat out_plane;
    cv::resize(in_plane, out_plane, cv::Size(width, height), 0, 0, cv::INTER_LINEAR);
    for (int i = 0; i < height * width; ++i) {
      out.mutable_data()[i * channels + c] = out_plane.at<float>(i);
    }
  }
  return out;
}

}  // namespace

void BindImages(py::module_& m) {
  m.def("_read_image", &ReadImage, py::arg("filename"), py::arg("color") = true);
  m.def("_resize_image", &ResizeImage, py::arg("image"), py::arg("height"), py::arg("width"));
}
#else
void BindImages(py::module_& m) {
  const auto no_opencv = [](py::args, py::kwargs) {
    throw Error("this build of Crema reads no images (install OpenCV's imgcodecs and rebuild)");
  };
  m.def("_read_image", no_opencv);
  m.def("_resize_image", no_opencv);
}
#endif

}  // namespace python
}  // namespace crema
