// The last two steps of crema.io.Transformer.preprocess, mean subtraction
// and the input scale, by the DataTransformer that data layers, `crema
// classify` and `crema detect` use: one formula, (in - mean) * scale, in one
// place.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <vector>

#include "bindings.hpp"
#include "crema/blob.hpp"
#include "crema/data_transformer.hpp"

namespace py = pybind11;

namespace crema {
namespace python {
namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

// A (C, H, W) array into `blob`, 1 x C x H x W (copied).
void ToImageBlob(const FloatArray& image, Blob<float>* blob) {
  blob->Reshape(std::vector<int>{1, static_cast<int>(image.shape(0)),
                                 static_cast<int>(image.shape(1)),
                                 static_cast<int>(image.shape(2))});
  std::copy(image.data(), image.data() + image.size(), blob->mutable_cpu_data());
}

// (image - mean) * scale. mean: None, one value per channel (C,), or one per
// value (C, H, W), as Transformer.set_mean leaves it.
py::array_t<float> SubtractMeanAndScale(const FloatArray& image, const py::object& mean,
                                        float scale) {
  CREMA_REQUIRE(image.ndim() == 3,
                "preprocess: a 3-D array, got " << image.ndim() << " dimensions");
  TransformationParameter param;
  param.set_scale(scale);
  Blob<float> input;
  ToImageBlob(image, &input);
  Blob<float> output(input.shape());
  if (mean.is_none()) {
    DataTransformer<float>(param, TEST).Transform(&input, &output);
  } else {
    const FloatArray values = mean.cast<FloatArray>();
    if (values.ndim() == 1) {
      for (py::ssize_t c = 0; c < values.shape(0); ++c) param.add_mean_value(values.at(c));
      DataTransformer<float>(param, TEST).Transform(&input, &output);
    } else {
      CREMA_REQUIRE(values.ndim() == 3, "preprocess: a mean of " << values.ndim() << " dimensions");
      Blob<float> mean_image;
      ToImageBlob(values, &mean_image);
      DataTransformer<float>(param, TEST, mean_image).Transform(&input, &output);
    }
  }
  py::array_t<float> out({image.shape(0), image.shape(1), image.shape(2)});
  std::copy(output.cpu_data(), output.cpu_data() + output.count(), out.mutable_data());
  return out;
}

}  // namespace

void BindTransformer(py::module_& m) {
  m.def("_subtract_mean_and_scale", &SubtractMeanAndScale, py::arg("image"), py::arg("mean"),
        py::arg("scale"));
}

}  // namespace python
}  // namespace crema
