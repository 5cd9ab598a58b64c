#include "crema/util/image_io.hpp"

#ifdef CREMA_OPENCV

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <opencv2/imgproc/imgproc.hpp>
#include <vector>

#include "crema/common.hpp"
#include "crema/images/image_header.hpp"
#include "crema/util/io.hpp"

namespace crema {

namespace {

int DecodeFlag(ImageColor color) {
  switch (color) {
    case ImageColor::kColor:
      return cv::IMREAD_COLOR;
    case ImageColor::kGray:
      return cv::IMREAD_GRAYSCALE;
    default:
      return cv::IMREAD_ANYCOLOR;  // grey stays grey, colour becomes BGR, alpha is dropped
  }
}

// 8-bit images of 1 or 3 channels are what Datums and the transformer hold.
void RequireEightBit(const cv::Mat& image, const std::string& what) {
  CREMA_REQUIRE(image.depth() == CV_8U && (image.channels() == 1 || image.channels() == 3),
                what << ": an image of " << image.channels() << " channels of "
                     << (image.elemSize1() * 8) << " bits; Crema reads 8-bit grey or colour");
}

const char* FormatName(ImageHeader::Format format) {
  switch (format) {
    case ImageHeader::Format::kJpeg:
      return "JPEG";
    case ImageHeader::Format::kPng:
      return "PNG";
    case ImageHeader::Format::kBmp:
      return "BMP";
    default:
      return "encoded";
  }
}

void RequirePixelsWithinLimit(uint64_t width, uint64_t height, const std::string& what) {
  const uint64_t limit = MaxImagePixels();
  CREMA_REQUIRE(width * height <= limit, what << ": an image of " << width << " x " << height
                                              << " = " << width * height
                                              << " pixels, above the limit of " << limit
                                              << " (CREMA_MAX_IMAGE_PIXELS raises it)");
}

// A resize asked for by a file's settings (new_height, new_width) is held to
// the pixel limit too, before cv::resize takes the memory.
cv::Mat Resized(const cv::Mat& image, int height, int width, const std::string& what,
                int interpolation = cv::INTER_LINEAR) {
  if (height <= 0 || width <= 0 || (image.rows == height && image.cols == width)) return image;
  RequirePixelsWithinLimit(width, height, what + " resized");
  cv::Mat resized;
  cv::resize(image, resized, cv::Size(width, height), 0, 0, interpolation);
  return resized;
}

// The header is read before the decoder runs: the decode's memory is
// bounded by the pixel limit, and a file that ends early is refused rather
// than decoded into grey padding.
void RequireWholeAndWithinLimit(const std::string& bytes, const std::string& what) {
  const ImageHeader header =
      ReadImageHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  CREMA_REQUIRE(header.defect.empty(), what << ": not a whole " << FormatName(header.format)
                                            << " image: " << header.defect);
  RequirePixelsWithinLimit(header.width, header.height, what);
}

cv::Mat DecodeImageBytes(const std::string& bytes, ImageColor color, const std::string& what) {
  cv::Mat image;
  if (!bytes.empty()) {  // OpenCV asserts on an empty buffer
    RequireWholeAndWithinLimit(bytes, what);
    const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8UC1,
                         const_cast<char*>(bytes.data()));
    try {
      image = cv::imdecode(buffer, DecodeFlag(color));
    } catch (const cv::Exception&) {
      image.release();  // a decoder that throws on corrupt data: reported below
    }
  }
  CREMA_REQUIRE(!image.empty(), what << ": the encoded image does not decode (" << bytes.size()
                                     << " bytes; corrupt or not an image)");
  // Formats whose header Crema does not read are bounded here, after OpenCV's
  // own bound (2^30 pixels) held the decode.
  RequirePixelsWithinLimit(image.cols, image.rows, what);
  RequireEightBit(image, what);
  return image;
}

// OpenCV throws for a format it has no encoder for, and returns false when
// the encoder fails.
std::string EncodeImage(const cv::Mat& image, const std::string& encoding,
                        const std::string& filename) {
  std::vector<uchar> encoded;
  bool written = false;
  try {
    written = cv::imencode("." + encoding, image, encoded);
  } catch (const cv::Exception&) {
    written = false;
  }
  CREMA_REQUIRE(written, filename << ": cannot encode as '" << encoding
                                  << "' (not a format OpenCV writes: jpg, png, bmp, ...)");
  return std::string(encoded.begin(), encoded.end());
}

// An image file's bytes, read whole after its size is checked: a file of
// four bytes per allowed pixel holds any image within the limit, even an
// uncompressed one.
std::string ReadFileBytes(const std::string& filename) {
  struct stat info;
  CREMA_REQUIRE(::stat(filename.c_str(), &info) == 0, filename << ": no such image file");
  CREMA_REQUIRE(S_ISREG(info.st_mode), filename << ": not a regular file");
  const uint64_t limit = 4 * MaxImagePixels() + (uint64_t(1) << 20);
  CREMA_REQUIRE(static_cast<uint64_t>(info.st_size) <= limit,
                filename << ": " << info.st_size
                         << " bytes, more than an image within the limit of " << MaxImagePixels()
                         << " pixels takes (CREMA_MAX_IMAGE_PIXELS raises it)");
  std::ifstream file(filename, std::ios::binary);
  CREMA_REQUIRE(file.good(), filename << ": cannot open image file");
  std::string bytes(static_cast<size_t>(info.st_size), '\0');
  file.read(&bytes[0], static_cast<std::streamsize>(bytes.size()));
  CREMA_REQUIRE(static_cast<size_t>(file.gcount()) == bytes.size(),
                filename << ": cannot read the image file (it changed while being read)");
  return bytes;
}

}  // namespace

std::string ImageExtension(const std::string& filename) {
  const size_t dot = filename.rfind('.');
  const size_t slash = filename.rfind('/');
  const bool has_extension =
      dot != std::string::npos && (slash == std::string::npos || dot > slash);
  std::string extension = has_extension ? filename.substr(dot + 1) : "";
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == "jpeg" ? "jpg" : extension;
}

cv::Mat ReadImageToCVMat(const std::string& filename, ImageColor color, int height, int width) {
  return Resized(DecodeImageBytes(ReadFileBytes(filename), color, filename), height, width,
                 filename);
}

cv::Mat ReadLabelImageToCVMat(const std::string& filename, int height, int width) {
  return Resized(DecodeImageBytes(ReadFileBytes(filename), ImageColor::kGray, filename), height,
                 width, filename, cv::INTER_NEAREST);
}

cv::Mat DecodeDatumToCVMat(const Datum& datum, ImageColor color, const std::string& what) {
  CREMA_REQUIRE(datum.encoded(), what << ": not an encoded record");
  return DecodeImageBytes(datum.data(), color, what);
}

void ImageToPlanes(const cv::Mat& image, uint8_t* planes) {
  RequireEightBit(image, "image");
  const int channels = image.channels();
  // Each plane a view into `planes`: cv::split (vectorised) fills them in place.
  std::vector<cv::Mat> views;
  for (int c = 0; c < channels; ++c) {
    views.emplace_back(image.rows, image.cols, CV_8UC1,
                       planes + static_cast<size_t>(c) * image.rows * image.cols);
  }
  cv::split(image, views);
}

void CVMatToDatum(const cv::Mat& image, Datum* datum) {
  RequireEightBit(image, "image");
  const int channels = image.channels(), height = image.rows, width = image.cols;
  datum->set_channels(channels);
  datum->set_height(height);
  datum->set_width(width);
  datum->clear_float_data();
  datum->set_encoded(false);
  std::string* bytes = datum->mutable_data();
  bytes->resize(static_cast<size_t>(channels) * height * width);
  ImageToPlanes(image, reinterpret_cast<uint8_t*>(&(*bytes)[0]));
}

void ReadImageToDatum(const std::string& filename, int label, int height, int width,
                      ImageColor color, const std::string& encoding, Datum* datum) {
  datum->set_label(label);
  if (encoding.empty()) {
    CVMatToDatum(ReadImageToCVMat(filename, color, height, width), datum);
    return;
  }
  const std::string bytes = ReadFileBytes(filename);
  // Decoded as stored, an image that already has the channels asked for is
  // the image the asked-for decode gives, and then the file's bytes (when in
  // that format and not resized) stand for it unchanged.
  cv::Mat image = DecodeImageBytes(bytes, ImageColor::kAsStored, filename);
  const bool stored_as_asked =
      color == ImageColor::kAsStored || (image.channels() == 1) == (color == ImageColor::kGray);
  if (!stored_as_asked) image = DecodeImageBytes(bytes, color, filename);
  const cv::Mat resized = Resized(image, height, width, filename);
  datum->set_channels(resized.channels());
  datum->set_height(resized.rows);
  datum->set_width(resized.cols);
  datum->clear_float_data();
  datum->set_encoded(true);
  const bool same_pixels = stored_as_asked && resized.data == image.data;
  if (same_pixels && ImageExtension(filename) == ImageExtension("." + encoding)) {
    datum->set_data(bytes);  // already in that format: no re-encoding
    return;
  }
  datum->set_data(EncodeImage(resized, encoding, filename));
}

}  // namespace crema

#endif  // CREMA_OPENCV
