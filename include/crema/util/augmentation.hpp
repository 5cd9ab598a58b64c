// Training augmentations of one image, for DataTransformer: the geometry (a
// random resized crop and a rotation, as one bilinear warp), colour jitter
// and random erasing. An image is held as float planes (channels x height x
// width, rows contiguous) in the units it was read in. Every random draw
// comes from the calling thread's generator (Context::rng()), so a thread
// seeded per batch repeats its batches exactly.
#ifndef CREMA_UTIL_AUGMENTATION_HPP_
#define CREMA_UTIL_AUGMENTATION_HPP_

#include <vector>

#include "crema/proto/crema.pb.h"

namespace crema {
namespace augment {

struct Planes {
  int channels = 0;
  int height = 0;
  int width = 0;
  std::vector<float> values;  // channels * height * width

  void Resize(int c, int h, int w);
  float* plane(int c) { return values.data() + static_cast<size_t>(c) * height * width; }
  const float* plane(int c) const {
    return values.data() + static_cast<size_t>(c) * height * width;
  }
};

// A window of the source image in pixels: its top-left corner and its size
// (fractional: a warp samples between pixels).
struct Window {
  float x = 0;
  float y = 0;
  float width = 0;
  float height = 0;
};

// Whole pixels: rows [y, y + height), columns [x, x + width).
struct Rect {
  int y = 0;
  int x = 0;
  int height = 0;
  int width = 0;
};

// Refuses settings no draw could use, naming the field: a range that is
// empty, inverted or outside its domain, a rotation outside [0, 180], a
// jitter outside [0, 1], a probability outside [0, 1].
void CheckAugmentation(const TransformationParameter& param);

// Whether any augmentation is asked for (each is off by default).
bool AugmentationRequested(const TransformationParameter& param);
// Whether the geometry moves pixels (a random resized crop or a rotation).
bool GeometryRequested(const TransformationParameter& param);

// A random resized crop's window in an image of height x width: area
// fraction and log aspect ratio drawn uniformly, the place uniformly among
// whole-pixel offsets; after 10 draws that do not fit, the whole image.
Window DrawResizedCropWindow(const RandomResizedCropParameter& param, int height, int width);

// A uniform draw from [lower, upper] (lower when they are equal).
float DrawUniform(float lower, float upper);

// out (its size set by the caller, out->channels == in.channels) = the
// window of `in` rotated by `degrees` about the window's centre
// (counter-clockwise as displayed when positive) and scaled to fill out,
// sampled bilinearly at pixel centres. Rotated, samples outside `in` take
// fill[c]; unrotated (only half a pixel beyond an edge is sampled), the
// edge's own values.
// Needs OpenCV (a build without it refuses the geometry when the
// transformer is made).
void WarpWindow(const Planes& in, const Window& window, float degrees,
                const std::vector<float>& fill, Planes* out);

struct JitterFactors {
  float brightness = 1;
  float contrast = 1;
  float saturation = 1;
};
JitterFactors DrawJitter(const ColorJitterParameter& param);
// value *= brightness; then value = m + contrast * (value - m), m the
// image's mean grey; then, for 3 channels (BGR), each value = g +
// saturation * (value - g), g the pixel's grey (0.114 B + 0.587 G + 0.299 R).
// With `bytes`, every result is clamped to [0, 255] after each step.
void JitterColour(const JitterFactors& factors, bool bytes, Planes* planes);

// Whether to erase, and where, in an output of height x width: with
// probability prob, up to 10 draws of an area and an aspect ratio until
// one fits.
bool DrawErasure(const RandomErasingParameter& param, int height, int width, Rect* rect);
// Sets the rectangle of every channel of `out` (channels x height x width)
// to value.
template <typename Dtype>
void Erase(const Rect& rect, Dtype value, int channels, int height, int width, Dtype* out);

}  // namespace augment
}  // namespace crema

#endif  // CREMA_UTIL_AUGMENTATION_HPP_
