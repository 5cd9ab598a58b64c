#include "crema/data_transformer.hpp"

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include "crema/util/augmentation.hpp"
#include "crema/util/io.hpp"

#ifdef CREMA_OPENCV
#include "crema/util/image_io.hpp"
#endif

namespace crema {

namespace {

// A mean file holds a BlobProto; a malformed one is refused naming the file.
template <typename Dtype>
void ReadMeanFile(const std::string& filename, Blob<Dtype>* mean) {
  BlobProto proto;
  ReadProtoFromBinaryFile(filename, &proto);
  try {
    mean->FromProto(proto);
  } catch (const Error& e) {
    CREMA_FAIL("the mean file " << filename << ": " << e.what());
  }
}

// "3 x 28 x 28": an item's shape, without the batch axis.
std::string ItemShapeString(const std::vector<int>& shape) {
  std::ostringstream os;
  for (size_t i = 1; i < shape.size(); ++i) os << (i > 1 ? " x " : "") << shape[i];
  return os.str();
}

// Whether two shapes agree but for axis 0 (the batch).
bool SameItemShape(const std::vector<int>& a, const std::vector<int>& b) {
  return !a.empty() && !b.empty() && std::equal(a.begin() + 1, a.end(), b.begin() + 1, b.end());
}

}  // namespace

template <typename Dtype>
DataTransformer<Dtype>::DataTransformer(const TransformationParameter& param, Phase phase)
    : param_(param), phase_(phase) {
  CREMA_REQUIRE(!(param_.has_mean_file() && param_.mean_value_size() > 0),
                "transform_param: give mean_file or mean_value, not both");
  augment::CheckAugmentation(param_);
  augments_ = phase_ == TRAIN && augment::AugmentationRequested(param_);
  warps_ = phase_ == TRAIN && augment::GeometryRequested(param_);
#ifndef CREMA_OPENCV
  CREMA_REQUIRE(!warps_,
                "transform_param: random_resized_crop and rotation_degrees need a build "
                "of Crema with OpenCV (install libopencv-imgproc-dev and rebuild)");
#endif
  CREMA_REQUIRE(!(warps_ && param_.has_mean_file()),
                "transform_param: random_resized_crop and rotation_degrees move pixels, so a "
                "mean_file (one mean per pixel) no longer lines up; give mean_value");
  if (param_.has_mean_file()) {
    mean_source_ = "the mean file " + param_.mean_file();
    ReadMeanFile(param_.mean_file(), &data_mean_);
    RequireMeanImage();
  }
  for (float value : param_.mean_value()) mean_values_.push_back(static_cast<Dtype>(value));
  CREMA_REQUIRE(!(param_.force_color() && param_.force_gray()),
                "transform_param: force_color and force_gray exclude each other; give one");
  CREMA_REQUIRE(!param_.has_resize_param() && !param_.has_distort_param() &&
                    !param_.has_expand_param() && !param_.has_emit_constraint(),
                "transform_param: resize_param, distort_param, expand_param and emit_constraint "
                "(SSD's) are applied only by AnnotatedData, which moves the boxes with the "
                "image; this layer would ignore them");
  CREMA_REQUIRE(
      param_.scale_factors_size() == 0 && !param_.has_crop_height() && !param_.has_crop_width(),
      "transform_param: scale_factors, crop_height and crop_width (DeepLab v2's and "
      "PSPNet's) are applied only by ImageSegData, which scales and crops the labels "
      "with the image; this layer would ignore them");
}

template <typename Dtype>
DataTransformer<Dtype>::DataTransformer(const TransformationParameter& param, Phase phase,
                                        const Blob<Dtype>& mean)
    : DataTransformer(param, phase) {
  CREMA_REQUIRE(!param_.has_mean_file() && param_.mean_value_size() == 0,
                "transform_param: a mean is given; give no mean_file or mean_value besides");
  CREMA_REQUIRE(!warps_,
                "transform_param: random_resized_crop and rotation_degrees move "
                "pixels, so a mean image no longer lines up");
  mean_source_ = "the mean";
  data_mean_.CopyFrom(mean, false, true);
  RequireMeanImage();
}

// One image, 1 x channels x height x width (a 5-D blob would not even have a
// height).
template <typename Dtype>
void DataTransformer<Dtype>::RequireMeanImage() const {
  CREMA_REQUIRE(data_mean_.num_axes() == 4 && data_mean_.shape(0) == 1,
                mean_source_ << " has shape " << data_mean_.shape_string()
                             << "; expected one image, 1 x channels x height x width");
}

template <typename Dtype>
int DataTransformer<Dtype>::Rand(int n) {
  return static_cast<int>(Context::rng()() % static_cast<uint32_t>(n));
}

template <typename Dtype>
std::vector<int> DataTransformer<Dtype>::InferBlobShape(const Datum& datum) const {
#ifdef CREMA_OPENCV
  if (datum.encoded()) return InferBlobShape(Decode(datum));
#else
  CREMA_REQUIRE(!datum.encoded(),
                "the data holds encoded images (JPEG/PNG); this build of Crema decodes raw "
                "records only (install OpenCV, libopencv-imgcodecs-dev, and rebuild)");
#endif
  CheckSize(datum.channels(), datum.height(), datum.width());
  return OutputShape(datum.channels(), datum.height(), datum.width());
}

template <typename Dtype>
std::vector<int> DataTransformer<Dtype>::OutputShape(int channels, int height, int width) const {
  const int crop = static_cast<int>(param_.crop_size());
  return {1, channels, crop ? crop : height, crop ? crop : width};
}

template <typename Dtype>
void DataTransformer<Dtype>::CheckSize(int channels, int height, int width) const {
  const int crop = static_cast<int>(param_.crop_size());
  CREMA_REQUIRE(channels > 0 && height > 0 && width > 0,
                "a record of shape " << channels << "x" << height << "x" << width << " is empty");
  // A random resized crop scales its window to crop_size: any size will do.
  CREMA_REQUIRE(
      (height >= crop && width >= crop) || resizes_crop(),
      "crop_size " << crop << " is larger than the " << height << "x" << width << " input");
  CREMA_REQUIRE(channels == 3 || !augments_ || !param_.has_color_jitter() ||
                    param_.color_jitter().saturation() == 0,
                "transform_param: color_jitter { saturation: "
                    << param_.color_jitter().saturation() << " } needs colour images; these have "
                    << channels << " channel(s)");
  if (!mean_values_.empty()) {
    CREMA_REQUIRE(mean_values_.size() == 1 || static_cast<int>(mean_values_.size()) == channels,
                  "mean_value has " << mean_values_.size() << " values for " << channels
                                    << " channels; give one, or one per channel");
  }
  if (data_mean_.count() > 0) {
    CREMA_REQUIRE(data_mean_.channels() == channels && data_mean_.height() == height &&
                      data_mean_.width() == width,
                  mean_source_ << " has shape " << data_mean_.shape_string() << ", the data is "
                               << channels << "x" << height << "x" << width
                               << " (the mean is of the images before any crop)");
  }
}

template <typename Dtype>
typename DataTransformer<Dtype>::Choice DataTransformer<Dtype>::Choose(int height, int width) {
  Choice choice;
  const int crop = static_cast<int>(param_.crop_size());
  choice.mirror = param_.mirror() && Rand(2);
  // A random resized crop draws its own window (crop_size is its output).
  if (crop && !resizes_crop()) {
    if (phase_ == TRAIN) {
      choice.h_off = Rand(height - crop + 1);
      choice.w_off = Rand(width - crop + 1);
    } else {
      choice.h_off = (height - crop) / 2;
      choice.w_off = (width - crop) / 2;
    }
  }
  return choice;
}

namespace {

// One value: (in - mean) * scale, in that order wherever it is computed.
template <typename Dtype, typename Source>
inline Dtype TransformValue(Source in, Dtype mean, Dtype scale) {
  Dtype value = static_cast<Dtype>(in);
  value -= mean;
  return value * scale;
}

// One output row of one channel: out[w] = (in[w] - mean[w]) * scale, read
// backwards when mirrored. The mirror and the kind of mean are compile-time
// so that the compiler vectorises each variant (this loop is most of an image
// pipeline's time after decoding).
template <typename Dtype, typename Source, bool kMirror, bool kMeanRow>
void TransformRow(const Source* __restrict in, const Dtype* __restrict mean_row, Dtype mean_value,
                  Dtype scale, int width, Dtype* __restrict out) {
  const auto mean = [&](int from) { return kMeanRow ? mean_row[from] : mean_value; };
  int w = 0;
  if (kMirror) {
    // A loop that reads backwards is not vectorised; blocks of 8 read
    // forwards, then stored in reverse, are.
    constexpr int kBlock = 8;
    for (; w + kBlock <= width; w += kBlock) {
      const int from = width - kBlock - w;
      Dtype block[kBlock];
      for (int k = 0; k < kBlock; ++k) {
        block[k] = TransformValue(in[from + k], mean(from + k), scale);
      }
      for (int k = 0; k < kBlock; ++k) out[w + k] = block[kBlock - 1 - k];
    }
  }
  for (; w < width; ++w) {
    const int from = kMirror ? width - 1 - w : w;
    out[w] = TransformValue(in[from], mean(from), scale);
  }
}

template <typename Dtype, typename Source>
void TransformRowVariant(const Source* in, const Dtype* mean_row, Dtype mean_value, Dtype scale,
                         int width, bool mirror, Dtype* out) {
  if (mirror) {
    if (mean_row)
      return TransformRow<Dtype, Source, true, true>(in, mean_row, mean_value, scale, width, out);
    return TransformRow<Dtype, Source, true, false>(in, mean_row, mean_value, scale, width, out);
  }
  if (mean_row)
    return TransformRow<Dtype, Source, false, true>(in, mean_row, mean_value, scale, width, out);
  TransformRow<Dtype, Source, false, false>(in, mean_row, mean_value, scale, width, out);
}

}  // namespace

template <typename Dtype>
template <typename Source>
void DataTransformer<Dtype>::TransformValues(const Source* in, int channels, int height, int width,
                                             Dtype* out) {
  CheckSize(channels, height, width);
  WriteValues(in, channels, height, width, out);
}

template <typename Dtype>
template <typename Source>
void DataTransformer<Dtype>::WriteValues(const Source* in, int channels, int height, int width,
                                         Dtype* out) {
  if (augments_) {
    TransformAugmented(in, channels, height, width, out);
    return;
  }
  const int crop = static_cast<int>(param_.crop_size());
  const int out_h = crop ? crop : height;
  const int out_w = crop ? crop : width;
  const Choice choice = Choose(height, width);
  WriteRows(
      [&](int c, int h) { return in + (c * height + h + choice.h_off) * width + choice.w_off; },
      channels, height, width, out_h, out_w, choice, out);
}

template <typename Dtype>
template <typename Source>
void DataTransformer<Dtype>::TransformAugmented(const Source* in, int channels, int height,
                                                int width, Dtype* out) {
  const int crop = static_cast<int>(param_.crop_size());
  const int out_h = crop ? crop : height;
  const int out_w = crop ? crop : width;
  const Choice choice = Choose(height, width);
  augment::Planes& window = augment_window_;
  window.Resize(channels, out_h, out_w);
  if (warps_) {
    WarpSource(in, channels, height, width, choice);
  } else {
    for (int c = 0; c < channels; ++c) {
      for (int h = 0; h < out_h; ++h) {
        const Source* row = in + (c * height + h + choice.h_off) * width + choice.w_off;
        std::copy(row, row + out_w, window.plane(c) + h * out_w);
      }
    }
  }
  if (param_.has_color_jitter()) {
    augment::JitterColour(augment::DrawJitter(param_.color_jitter()),
                          std::is_same<Source, uint8_t>::value, &window);
  }
  // Without a warp the window is a plain crop, so a mean file still lines up.
  WriteRows([&](int c, int h) { return window.plane(c) + h * out_w; }, channels, height, width,
            out_h, out_w, choice, out);
  augment::Rect erased;
  if (param_.has_random_erasing() &&
      augment::DrawErasure(param_.random_erasing(), out_h, out_w, &erased)) {
    augment::Erase(erased, static_cast<Dtype>(param_.random_erasing().value()), channels, out_h,
                   out_w, out);
  }
}

template <typename Dtype>
template <typename Source>
void DataTransformer<Dtype>::WarpSource(const Source* in, int channels, int height, int width,
                                        const Choice& choice) {
  augment::Planes& source = augment_source_;
  source.Resize(channels, height, width);
  std::copy(in, in + source.values.size(), source.values.begin());
  augment::Planes& window = augment_window_;
  augment::Window from;  // the usual crop, unless a random resized crop draws its own
  from.x = static_cast<float>(choice.w_off);
  from.y = static_cast<float>(choice.h_off);
  from.width = static_cast<float>(window.width);
  from.height = static_cast<float>(window.height);
  if (param_.has_random_resized_crop()) {
    from = augment::DrawResizedCropWindow(param_.random_resized_crop(), height, width);
  }
  const float limit = param_.rotation_degrees();
  const float degrees = limit > 0 ? augment::DrawUniform(-limit, limit) : 0.f;
  std::vector<float> fill(channels);  // the mean: 0 after subtraction
  for (int c = 0; c < channels; ++c) fill[c] = static_cast<float>(MeanValue(c));
  augment::WarpWindow(source, from, degrees, fill, &window);
}

template <typename Dtype>
template <typename RowAt>
void DataTransformer<Dtype>::WriteRows(const RowAt& row_at, int channels, int height, int width,
                                       int out_h, int out_w, const Choice& choice, Dtype* out) {
  const Dtype scale = param_.scale();
  const Dtype* mean = data_mean_.count() > 0 ? data_mean_.cpu_data() : nullptr;
  for (int c = 0; c < channels; ++c) {
    const Dtype mean_value = MeanValue(c);
    for (int h = 0; h < out_h; ++h) {
      const int row = h + choice.h_off;
      const Dtype* mean_row = mean ? mean + (c * height + row) * width + choice.w_off : nullptr;
      TransformRowVariant(row_at(c, h), mean_row, mean_value, scale, out_w, choice.mirror,
                          out + (c * out_h + h) * out_w);
    }
  }
}

template <typename Dtype>
Dtype DataTransformer<Dtype>::MeanValue(int channel) const {
  if (mean_values_.empty()) return Dtype(0);
  return mean_values_[mean_values_.size() == 1 ? 0 : channel];
}

template <typename Dtype>
void DataTransformer<Dtype>::RequireItemShape(const std::vector<int>& shape,
                                              const std::vector<int>& expected) const {
  // The same count in another shape would be read across rows.
  CREMA_REQUIRE(SameItemShape(shape, expected),
                "a record transforms to " << ItemShapeString(shape) << ", the first record to "
                                          << ItemShapeString(expected)
                                          << "; the records of a source share one shape");
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const Datum& datum, Dtype* out,
                                       const std::vector<int>& shape) {
#ifdef CREMA_OPENCV
  if (datum.encoded()) {
    const cv::Mat image = Decode(datum);
    RequireItemShape(OutputShape(image.channels(), image.rows, image.cols), shape);
    Transform(image, out);  // checks the size
    return;
  }
#endif
  RequireItemShape(OutputShape(datum.channels(), datum.height(), datum.width()), shape);
  Transform(datum, out);  // checks the size
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const Datum& datum, Dtype* out) {
#ifdef CREMA_OPENCV
  if (datum.encoded()) {
    Transform(Decode(datum), out);
    return;
  }
#endif
  const int channels = datum.channels(), height = datum.height(), width = datum.width();
  CheckSize(channels, height, width);  // the one check of the record's shape
  const size_t size = static_cast<size_t>(channels) * height * width;
  if (!datum.data().empty()) {
    CREMA_REQUIRE(datum.data().size() == size,
                  "a record holds " << datum.data().size() << " bytes, its shape " << channels
                                    << "x" << height << "x" << width << " needs " << size);
    WriteValues(reinterpret_cast<const uint8_t*>(datum.data().data()), channels, height, width,
                out);
  } else {
    CREMA_REQUIRE(static_cast<size_t>(datum.float_data_size()) == size,
                  "a record holds " << datum.float_data_size() << " float values, its shape "
                                    << channels << "x" << height << "x" << width << " needs "
                                    << size);
    WriteValues(datum.float_data().data(), channels, height, width, out);
  }
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const Datum& datum, Blob<Dtype>* transformed) {
  const std::vector<int> shape = InferBlobShape(datum);
  CREMA_REQUIRE(transformed->num_axes() == 4 && transformed->channels() == shape[1] &&
                    transformed->height() == shape[2] && transformed->width() == shape[3],
                "a record transforms to shape 1 " << shape[1] << " " << shape[2] << " " << shape[3]
                                                  << ", the target blob is "
                                                  << transformed->shape_string());
  Transform(datum, transformed->mutable_cpu_data());
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const std::vector<Datum>& datums, Blob<Dtype>* transformed) {
  CREMA_REQUIRE(
      static_cast<int>(datums.size()) <= transformed->num(),
      datums.size() << " records do not fit a blob of " << transformed->num() << " items");
  const int item_size = transformed->count(1);
  for (size_t i = 0; i < datums.size(); ++i) {
    Transform(datums[i], transformed->mutable_cpu_data() + i * item_size);
  }
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(Blob<Dtype>* input, Blob<Dtype>* transformed) {
  const int crop = static_cast<int>(param_.crop_size());
  const int num = input->num(), channels = input->channels();
  const int height = input->height(), width = input->width();
  const int out_h = crop ? crop : height, out_w = crop ? crop : width;
  CREMA_REQUIRE(transformed->num() == num && transformed->channels() == channels &&
                    transformed->height() == out_h && transformed->width() == out_w,
                "transform of a blob of shape "
                    << input->shape_string() << " into one of shape " << transformed->shape_string()
                    << " (expected " << num << " " << channels << " " << out_h << " " << out_w
                    << ")");
  CheckSize(channels, height, width);
  const int in_size = channels * height * width, out_size = channels * out_h * out_w;
  for (int n = 0; n < num; ++n) {
    WriteValues(input->cpu_data() + n * in_size, channels, height, width,
                transformed->mutable_cpu_data() + n * out_size);
  }
}

#ifdef CREMA_OPENCV
template <typename Dtype>
cv::Mat DataTransformer<Dtype>::Decode(const Datum& datum) const {
  const ImageColor color = param_.force_color()  ? ImageColor::kColor
                           : param_.force_gray() ? ImageColor::kGray
                                                 : ImageColor::kAsStored;
  return DecodeDatumToCVMat(datum, color, "an encoded record");
}

template <typename Dtype>
std::vector<int> DataTransformer<Dtype>::InferBlobShape(const cv::Mat& image) const {
  const int crop = static_cast<int>(param_.crop_size());
  CheckSize(image.channels(), image.rows, image.cols);
  return {1, image.channels(), crop ? crop : image.rows, crop ? crop : image.cols};
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const cv::Mat& image, Dtype* out) {
  CREMA_REQUIRE(image.depth() == CV_8U && (image.channels() == 1 || image.channels() == 3),
                "an image of " << image.channels() << " channels of " << image.elemSize1() * 8
                               << " bits; Crema transforms 8-bit grey or colour");
  // OpenCV's interleaved pixels into planes first: cv::split deinterleaves
  // with vector instructions, where a strided read per value would not.
  // (new[] without value-initialisation: every byte is written by the split.)
  std::unique_ptr<uint8_t[]> planes(new uint8_t[image.total() * image.channels()]);
  ImageToPlanes(image, planes.get());
  TransformValues(planes.get(), image.channels(), image.rows, image.cols, out);
}
#endif

INSTANTIATE_CLASS(DataTransformer);

}  // namespace crema
