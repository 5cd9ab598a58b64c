#include "crema/util/augmentation.hpp"

#include <algorithm>
#include <cmath>

#include "crema/common.hpp"
#include "crema/util/math_functions.hpp"

#ifdef CREMA_OPENCV
#include <opencv2/core/core.hpp>
#include <opencv2/imgproc/imgproc.hpp>
#endif

namespace crema {
namespace augment {

namespace {

constexpr int kDraws = 10;  // tries for a window that fits, as the papers do

// A whole number in [0, n).
int DrawIndex(int n) { return static_cast<int>(Context::rng()() % static_cast<uint32_t>(n)); }

// lower <= upper, both in [low, high] ("name_min" and "name_max").
void RequireRange(const char* message, const char* name, float lower, float upper, float low,
                  float high, bool low_open) {
  const bool lower_ok = low_open ? lower > low : lower >= low;
  CREMA_REQUIRE(
      std::isfinite(lower) && std::isfinite(upper) && lower_ok && upper <= high && lower <= upper,
      "transform_param: " << message << " { " << name << "_min: " << lower << " " << name
                          << "_max: " << upper << " } is not a range with " << low
                          << (low_open ? " < " : " <= ") << name << "_min <= " << name
                          << "_max <= " << high);
}

void RequireUnit(const char* message, const char* name, float value) {
  CREMA_REQUIRE(
      std::isfinite(value) && value >= 0 && value <= 1,
      "transform_param: " << message << " { " << name << ": " << value << " } is outside [0, 1]");
}

// A log-uniform draw from [lower, upper].
float DrawLogUniform(float lower, float upper) {
  return std::exp(DrawUniform(std::log(lower), std::log(upper)));
}

void Clamp(bool bytes, float* value) {
  if (bytes) *value = std::min(255.f, std::max(0.f, *value));
}

// The pixel's grey in BGR planes.
float Grey(const float* b, const float* g, const float* r, size_t i) {
  return 0.114f * b[i] + 0.587f * g[i] + 0.299f * r[i];
}

float MeanGrey(const Planes& planes) {
  const size_t area = static_cast<size_t>(planes.height) * planes.width;
  double sum = 0;
  if (planes.channels == 3) {
    for (size_t i = 0; i < area; ++i)
      sum += Grey(planes.plane(0), planes.plane(1), planes.plane(2), i);
  } else {
    for (size_t i = 0; i < area * planes.channels; ++i) sum += planes.values[i];
    sum /= planes.channels;
  }
  return static_cast<float>(sum / area);
}

// Up to kDraws draws of a rectangle in an image of height x width: an area
// share uniform in [scale_min, scale_max], a ratio log-uniform in
// [ratio_min, ratio_max] (width over height when width_over_height, else
// height over width), then its place among the whole-pixel offsets. False
// when none fits.
bool DrawRect(float scale_min, float scale_max, float ratio_min, float ratio_max,
              bool width_over_height, int height, int width, Rect* rect) {
  const float area = static_cast<float>(height) * width;
  for (int draw = 0; draw < kDraws; ++draw) {
    const float target = area * DrawUniform(scale_min, scale_max);
    const float ratio = DrawLogUniform(ratio_min, ratio_max);
    const int along = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int across = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    const int w = width_over_height ? along : across;
    const int h = width_over_height ? across : along;
    if (w < 1 || h < 1 || w > width || h > height) continue;
    rect->y = DrawIndex(height - h + 1);
    rect->x = DrawIndex(width - w + 1);
    rect->height = h;
    rect->width = w;
    return true;
  }
  return false;
}

}  // namespace

void Planes::Resize(int c, int h, int w) {
  channels = c;
  height = h;
  width = w;
  values.resize(static_cast<size_t>(c) * h * w);
}

void CheckAugmentation(const TransformationParameter& param) {
  if (param.has_random_resized_crop()) {
    const RandomResizedCropParameter& p = param.random_resized_crop();
    RequireRange("random_resized_crop", "scale", p.scale_min(), p.scale_max(), 0, 1, true);
    RequireRange("random_resized_crop", "ratio", p.ratio_min(), p.ratio_max(), 0, 1e6f, true);
  }
  const float degrees = param.rotation_degrees();
  CREMA_REQUIRE(std::isfinite(degrees) && degrees >= 0 && degrees <= 180,
                "transform_param: rotation_degrees " << degrees
                                                     << " is outside [0, 180] (the angle is drawn "
                                                        "from [-rotation_degrees, "
                                                        "rotation_degrees])");
  if (param.has_color_jitter()) {
    const ColorJitterParameter& p = param.color_jitter();
    RequireUnit("color_jitter", "brightness", p.brightness());
    RequireUnit("color_jitter", "contrast", p.contrast());
    RequireUnit("color_jitter", "saturation", p.saturation());
  }
  if (param.has_random_erasing()) {
    const RandomErasingParameter& p = param.random_erasing();
    RequireUnit("random_erasing", "prob", p.prob());
    RequireRange("random_erasing", "scale", p.scale_min(), p.scale_max(), 0, 1, true);
    RequireRange("random_erasing", "ratio", p.ratio_min(), p.ratio_max(), 0, 1e6f, true);
    CREMA_REQUIRE(std::isfinite(p.value()),
                  "transform_param: random_erasing { value: " << p.value() << " } is not finite");
  }
}

bool GeometryRequested(const TransformationParameter& param) {
  return param.has_random_resized_crop() || param.rotation_degrees() != 0;
}

bool AugmentationRequested(const TransformationParameter& param) {
  return GeometryRequested(param) || param.has_color_jitter() || param.has_random_erasing();
}

float DrawUniform(float lower, float upper) {
  float value = lower;
  rng_uniform<float>(1, lower, upper, &value);
  return value;
}

Window DrawResizedCropWindow(const RandomResizedCropParameter& param, int height, int width) {
  Window window;
  Rect rect;
  if (DrawRect(param.scale_min(), param.scale_max(), param.ratio_min(), param.ratio_max(), true,
               height, width, &rect)) {
    window.y = static_cast<float>(rect.y);
    window.x = static_cast<float>(rect.x);
    window.height = static_cast<float>(rect.height);
    window.width = static_cast<float>(rect.width);
  } else {  // the whole image
    window.height = static_cast<float>(height);
    window.width = static_cast<float>(width);
  }
  return window;
}

#ifdef CREMA_OPENCV
void WarpWindow(const Planes& in, const Window& window, float degrees,
                const std::vector<float>& fill, Planes* out) {
  // The map from an output pixel (u, v) to the source: its offset from the
  // output's centre, scaled to the window, rotated, from the window's centre;
  // pixel centres are at +0.5 in both.
  const double a = window.width / out->width, b = window.height / out->height;
  const double theta = degrees * M_PI / 180, c = std::cos(theta), s = std::sin(theta);
  const double cx = window.x + window.width / 2, cy = window.y + window.height / 2;
  const double du = a / 2 - window.width / 2, dv = b / 2 - window.height / 2;
  const double map[2][3] = {{c * a, -s * b, cx - 0.5 + c * du - s * dv},
                            {s * a, c * b, cy - 0.5 + s * du + c * dv}};
  const cv::Mat matrix(2, 3, CV_64F, const_cast<double*>(&map[0][0]));
  // Unrotated, only the half pixel beyond an edge is ever sampled: the edge
  // repeats there rather than fading into the fill.
  const int border = degrees == 0 ? cv::BORDER_REPLICATE : cv::BORDER_CONSTANT;
  for (int ch = 0; ch < in.channels; ++ch) {
    const cv::Mat source(in.height, in.width, CV_32F, const_cast<float*>(in.plane(ch)));
    cv::Mat target(out->height, out->width, CV_32F, out->plane(ch));
    cv::warpAffine(source, target, matrix, target.size(), cv::INTER_LINEAR | cv::WARP_INVERSE_MAP,
                   border, cv::Scalar(fill[ch]));
  }
}
#else
void WarpWindow(const Planes&, const Window&, float, const std::vector<float>&, Planes*) {
  CREMA_FAIL("random_resized_crop and rotation_degrees need a build of Crema with OpenCV");
}
#endif

JitterFactors DrawJitter(const ColorJitterParameter& param) {
  JitterFactors factors;
  const auto draw = [](float x) { return x > 0 ? DrawUniform(1 - x, 1 + x) : 1.f; };
  factors.brightness = draw(param.brightness());
  factors.contrast = draw(param.contrast());
  factors.saturation = draw(param.saturation());
  return factors;
}

void JitterColour(const JitterFactors& factors, bool bytes, Planes* planes) {
  std::vector<float>& v = planes->values;
  if (factors.brightness != 1) {
    for (float& value : v) {
      value *= factors.brightness;
      Clamp(bytes, &value);
    }
  }
  if (factors.contrast != 1) {
    const float mean = MeanGrey(*planes);
    for (float& value : v) {
      value = mean + factors.contrast * (value - mean);
      Clamp(bytes, &value);
    }
  }
  if (factors.saturation != 1 && planes->channels == 3) {
    const size_t area = static_cast<size_t>(planes->height) * planes->width;
    float *b = planes->plane(0), *g = planes->plane(1), *r = planes->plane(2);
    for (size_t i = 0; i < area; ++i) {
      const float grey = Grey(b, g, r, i);
      for (float* value : {b + i, g + i, r + i}) {
        *value = grey + factors.saturation * (*value - grey);
        Clamp(bytes, value);
      }
    }
  }
}

bool DrawErasure(const RandomErasingParameter& param, int height, int width, Rect* rect) {
  if (DrawUniform(0, 1) >= param.prob()) return false;
  return DrawRect(param.scale_min(), param.scale_max(), param.ratio_min(), param.ratio_max(), false,
                  height, width, rect);
}

template <typename Dtype>
void Erase(const Rect& rect, Dtype value, int channels, int height, int width, Dtype* out) {
  for (int c = 0; c < channels; ++c) {
    for (int y = rect.y; y < rect.y + rect.height; ++y) {
      Dtype* row = out + (static_cast<size_t>(c) * height + y) * width + rect.x;
      std::fill(row, row + rect.width, value);
    }
  }
}

template void Erase<float>(const Rect&, float, int, int, int, float*);
template void Erase<double>(const Rect&, double, int, int, int, double*);

}  // namespace augment
}  // namespace crema
