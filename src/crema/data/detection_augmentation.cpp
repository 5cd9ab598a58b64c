#include "crema/data/detection_augmentation.hpp"

#ifdef CREMA_OPENCV

#include <algorithm>
#include <cmath>
#include <numeric>
#include <opencv2/imgproc/imgproc.hpp>

#include "crema/common.hpp"

namespace crema {
namespace ssd {

namespace {

bool Chance(float probability) { return UniformFloat(0, 1) < probability; }

// Maps every box through an affine change of normalised coordinates:
// x' = x_offset + x * x_scale (and y likewise).
void MoveBoxes(float x_offset, float x_scale, float y_offset, float y_scale,
               std::vector<AnnotatedBox>* boxes) {
  for (AnnotatedBox& box : *boxes) {
    box.box.xmin = x_offset + box.box.xmin * x_scale;
    box.box.xmax = x_offset + box.box.xmax * x_scale;
    box.box.ymin = y_offset + box.box.ymin * y_scale;
    box.box.ymax = y_offset + box.box.ymax * y_scale;
  }
}

void RequireProbability(float value, const char* name) {
  CREMA_REQUIRE(value >= 0 && value <= 1,
                "distort_param: " << name << " " << value << " is not a probability in [0, 1]");
}

void RequireRange(float lower, float upper, const char* name) {
  CREMA_REQUIRE(lower >= 0 && lower <= upper, "distort_param: " << name << "_lower " << lower
                                                                << " and " << name << "_upper "
                                                                << upper
                                                                << " must satisfy 0 <= lower <= "
                                                                   "upper");
}

// value * alpha + beta, saturated to 8 bits, for every pixel of every channel.
void Affine(double alpha, double beta, cv::Mat* image) {
  image->convertTo(*image, -1, alpha, beta);
}

// One HSV channel changed by `change`, for a colour image.
template <typename Change>
void ChangeHsv(int channel, const char* what, cv::Mat* image, Change change) {
  CREMA_REQUIRE(image->channels() == 3, "distort_param: " << what
                                                          << " needs a colour image; this one has "
                                                          << image->channels() << " channel(s)");
  cv::Mat hsv;
  cv::cvtColor(*image, hsv, cv::COLOR_BGR2HSV);
  std::vector<cv::Mat> planes;
  cv::split(hsv, planes);
  change(&planes[channel]);
  cv::merge(planes, hsv);
  cv::cvtColor(hsv, *image, cv::COLOR_HSV2BGR);
}

void RandomBrightness(const DistortionParameter& p, cv::Mat* image) {
  if (!Chance(p.brightness_prob())) return;
  const float delta = UniformFloat(-p.brightness_delta(), p.brightness_delta());
  if (delta != 0) Affine(1, delta, image);
}

void RandomContrast(const DistortionParameter& p, cv::Mat* image) {
  if (!Chance(p.contrast_prob())) return;
  const float alpha = UniformFloat(p.contrast_lower(), p.contrast_upper());
  if (alpha != 1) Affine(alpha, 0, image);
}

void RandomSaturation(const DistortionParameter& p, cv::Mat* image) {
  if (!Chance(p.saturation_prob())) return;
  const float alpha = UniformFloat(p.saturation_lower(), p.saturation_upper());
  if (alpha == 1) return;
  ChangeHsv(1, "saturation", image, [alpha](cv::Mat* s) { s->convertTo(*s, -1, alpha, 0); });
}

void RandomHue(const DistortionParameter& p, cv::Mat* image) {
  if (!Chance(p.hue_prob())) return;
  const int delta = static_cast<int>(std::lround(UniformFloat(-p.hue_delta(), p.hue_delta())));
  if (delta == 0) return;
  // 8-bit hue is 0..179 (degrees / 2): the shift wraps around the circle.
  ChangeHsv(0, "hue", image, [delta](cv::Mat* h) {
    for (int row = 0; row < h->rows; ++row) {
      uint8_t* values = h->ptr<uint8_t>(row);
      for (int col = 0; col < h->cols; ++col) {
        values[col] = static_cast<uint8_t>(((values[col] + delta) % 180 + 180) % 180);
      }
    }
  });
}

void RandomChannelOrder(const DistortionParameter& p, cv::Mat* image) {
  if (!Chance(p.random_order_prob()) || image->channels() == 1) return;
  std::vector<cv::Mat> planes;
  cv::split(*image, planes);
  // Fisher-Yates from the thread's generator.
  for (size_t i = planes.size() - 1; i > 0; --i) {
    std::swap(planes[i], planes[Context::rng()() % (i + 1)]);
  }
  cv::merge(planes, *image);
}

int Interpolation(const ResizeParameter& param) {
  if (param.interp_mode_size() == 0) return cv::INTER_LINEAR;
  switch (param.interp_mode(Context::rng()() % param.interp_mode_size())) {
    case ResizeParameter::AREA:
      return cv::INTER_AREA;
    case ResizeParameter::NEAREST:
      return cv::INTER_NEAREST;
    case ResizeParameter::CUBIC:
      return cv::INTER_CUBIC;
    case ResizeParameter::LANCZOS4:
      return cv::INTER_LANCZOS4;
    case ResizeParameter::LINEAR:
      break;
  }
  return cv::INTER_LINEAR;
}

// A fill colour for an image of `channels`: one value for all, or one each.
cv::Scalar FillColour(const std::vector<float>& fill, int channels) {
  cv::Scalar colour(0, 0, 0, 0);
  for (int c = 0; c < channels && !fill.empty(); ++c) {
    colour[c] = fill[fill.size() == 1 ? 0 : static_cast<size_t>(c)];
  }
  return colour;
}

}  // namespace

cv::Mat DatumImage(const Datum& datum, ImageColor color, const std::string& what) {
  if (datum.encoded()) return DecodeDatumToCVMat(datum, color, what);
  CREMA_REQUIRE(datum.float_data_size() == 0,
                what << " holds float data; AnnotatedData reads 8-bit images (raw or encoded)");
  const int64_t channels = datum.channels(), height = datum.height(), width = datum.width();
  CREMA_REQUIRE((channels == 1 || channels == 3) && height > 0 && width > 0 &&
                    static_cast<int64_t>(datum.data().size()) == channels * height * width,
                what << " of shape " << channels << "x" << height << "x" << width << " holds "
                     << datum.data().size()
                     << " bytes; expected 1 or 3 channels and "
                        "channels x height x width bytes");
  std::vector<cv::Mat> planes;
  for (int c = 0; c < channels; ++c) {
    planes.emplace_back(static_cast<int>(height), static_cast<int>(width), CV_8UC1,
                        const_cast<char*>(datum.data().data()) + c * height * width);
  }
  cv::Mat image;
  cv::merge(planes, image);  // copies: the image owns its pixels
  if (color == ImageColor::kGray && channels == 3) cv::cvtColor(image, image, cv::COLOR_BGR2GRAY);
  if (color == ImageColor::kColor && channels == 1) cv::cvtColor(image, image, cv::COLOR_GRAY2BGR);
  return image;
}

void CheckDistortion(const DistortionParameter& p) {
  RequireProbability(p.brightness_prob(), "brightness_prob");
  RequireProbability(p.contrast_prob(), "contrast_prob");
  RequireProbability(p.saturation_prob(), "saturation_prob");
  RequireProbability(p.hue_prob(), "hue_prob");
  RequireProbability(p.random_order_prob(), "random_order_prob");
  CREMA_REQUIRE(p.brightness_delta() >= 0 && p.hue_delta() >= 0,
                "distort_param: brightness_delta and hue_delta must not be negative");
  if (p.contrast_prob() > 0) RequireRange(p.contrast_lower(), p.contrast_upper(), "contrast");
  if (p.saturation_prob() > 0) {
    RequireRange(p.saturation_lower(), p.saturation_upper(), "saturation");
  }
}

void DistortImage(const DistortionParameter& param, cv::Mat* image) {
  const bool contrast_first = UniformFloat(0, 1) > 0.5f;
  RandomBrightness(param, image);
  if (contrast_first) RandomContrast(param, image);
  RandomSaturation(param, image);
  RandomHue(param, image);
  if (!contrast_first) RandomContrast(param, image);
  RandomChannelOrder(param, image);
}

void ExpandImage(const ExpansionParameter& param, const std::vector<float>& fill, cv::Mat* image,
                 std::vector<AnnotatedBox>* boxes) {
  if (!Chance(param.prob())) return;
  const float ratio = UniformFloat(1, param.max_expand_ratio());
  const int width = image->cols, height = image->rows;
  const int canvas_width = std::max(width, static_cast<int>(width * ratio));
  const int canvas_height = std::max(height, static_cast<int>(height * ratio));
  const int left = static_cast<int>(std::floor(UniformFloat(0, canvas_width - width)));
  const int top = static_cast<int>(std::floor(UniformFloat(0, canvas_height - height)));
  cv::Mat canvas(canvas_height, canvas_width, image->type(), FillColour(fill, image->channels()));
  image->copyTo(canvas(cv::Rect(left, top, width, height)));
  *image = canvas;
  MoveBoxes(static_cast<float>(left) / canvas_width, static_cast<float>(width) / canvas_width,
            static_cast<float>(top) / canvas_height, static_cast<float>(height) / canvas_height,
            boxes);
}

void CropImage(const DetectionBox& window, const EmitConstraint& emit, cv::Mat* image,
               std::vector<AnnotatedBox>* boxes) {
  const int width = image->cols, height = image->rows;
  const int left = std::min(width - 1, std::max(0, static_cast<int>(window.xmin * width)));
  const int top = std::min(height - 1, std::max(0, static_cast<int>(window.ymin * height)));
  const int crop_width =
      std::min(width - left, std::max(1, static_cast<int>((window.xmax - window.xmin) * width)));
  const int crop_height =
      std::min(height - top, std::max(1, static_cast<int>((window.ymax - window.ymin) * height)));
  // The window the pixels really took, for the boxes.
  DetectionBox taken;
  taken.xmin = static_cast<float>(left) / width;
  taken.ymin = static_cast<float>(top) / height;
  taken.xmax = static_cast<float>(left + crop_width) / width;
  taken.ymax = static_cast<float>(top + crop_height) / height;
  *image = (*image)(cv::Rect(left, top, crop_width, crop_height)).clone();
  *boxes = CarryBoxes(*boxes, taken, emit, false);
}

void ResizeImage(const ResizeParameter& param, cv::Mat* image, std::vector<AnnotatedBox>* boxes) {
  const int width = static_cast<int>(param.width()), height = static_cast<int>(param.height());
  const int interpolation = Interpolation(param);
  if (param.resize_mode() == ResizeParameter::WARP) {
    cv::resize(*image, *image, cv::Size(width, height), 0, 0, interpolation);
    return;  // normalised boxes are unchanged by a warp
  }
  CREMA_REQUIRE(param.resize_mode() == ResizeParameter::FIT_LARGE_SIZE_AND_PAD,
                "resize_param: resize_mode FIT_SMALL_SIZE gives images of different sizes, "
                "which one batch cannot hold; use WARP or FIT_LARGE_SIZE_AND_PAD");
  const double scale =
      std::min(static_cast<double>(width) / image->cols, static_cast<double>(height) / image->rows);
  const int inner_width =
      std::min(width, std::max(1, static_cast<int>(std::lround(image->cols * scale))));
  const int inner_height =
      std::min(height, std::max(1, static_cast<int>(std::lround(image->rows * scale))));
  cv::Mat inner;
  cv::resize(*image, inner, cv::Size(inner_width, inner_height), 0, 0, interpolation);
  const int left = (width - inner_width) / 2, top = (height - inner_height) / 2;
  const int border = param.pad_mode() == ResizeParameter::MIRRORED         ? cv::BORDER_REFLECT101
                     : param.pad_mode() == ResizeParameter::REPEAT_NEAREST ? cv::BORDER_REPLICATE
                                                                           : cv::BORDER_CONSTANT;
  std::vector<float> pad(param.pad_value().begin(), param.pad_value().end());
  cv::copyMakeBorder(inner, *image, top, height - inner_height - top, left,
                     width - inner_width - left, border, FillColour(pad, inner.channels()));
  MoveBoxes(static_cast<float>(left) / width, static_cast<float>(inner_width) / width,
            static_cast<float>(top) / height, static_cast<float>(inner_height) / height, boxes);
}

void MirrorImage(cv::Mat* image, std::vector<AnnotatedBox>* boxes) {
  cv::flip(*image, *image, 1);
  MirrorBoxes(boxes);
}

}  // namespace ssd
}  // namespace crema

#endif  // CREMA_OPENCV
