// SSD's image augmentation with its boxes (weiliu89/caffe's AnnotatedData
// transformations), for builds with OpenCV: photometric distortion, zoom out
// (expansion onto a canvas), a crop to a sampled window, resizing and
// mirroring. Every step that moves pixels moves the boxes with them exactly:
// a box is mapped through the pixel rectangle the image really took (after
// rounding to whole pixels), so a box drawn on the image before a step
// covers the same pixels after it. Random draws come from the calling
// thread's generator (Context::rng()).
#ifndef CREMA_DATA_DETECTION_AUGMENTATION_HPP_
#define CREMA_DATA_DETECTION_AUGMENTATION_HPP_

#ifdef CREMA_OPENCV

#include <opencv2/core/core.hpp>
#include <string>
#include <vector>

#include "crema/detection/sampling.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/image_io.hpp"

namespace crema {
namespace ssd {

// A record's image as 8-bit BGR or grey: decoded when encoded, else its raw
// uint8 planes. Float data, or a size that does not match its bytes, is a
// user error naming `what`.
cv::Mat DatumImage(const Datum& datum, ImageColor color, const std::string& what);

// Refuses distortion parameters a draw could not use: probabilities outside
// [0, 1], a negative delta, a factor range that is not 0 <= lower <= upper.
void CheckDistortion(const DistortionParameter& param);

// Brightness, contrast, saturation and hue, each with its probability, in
// one of the fork's two orders (contrast first or last, evenly), then a
// random channel order. Hue moves around OpenCV's 0-179 circle (it wraps).
// Saturation and hue need a colour image (a user error otherwise).
void DistortImage(const DistortionParameter& param, cv::Mat* image);

// With probability prob: the image placed at a random whole-pixel offset on
// a canvas `ratio` times its size (ratio uniform in [1, max_expand_ratio]),
// filled with `fill` (one value per channel, or one for all); every box
// follows.
void ExpandImage(const ExpansionParameter& param, const std::vector<float>& fill, cv::Mat* image,
                 std::vector<AnnotatedBox>* boxes);

// Crops to `window` (normalised), rounded to whole pixels; the boxes that
// meet the emit constraint are carried into the crop, the others dropped.
void CropImage(const DetectionBox& window, const EmitConstraint& emit, cv::Mat* image,
               std::vector<AnnotatedBox>* boxes);

// Resizes as resize_param says: WARP to height x width, or
// FIT_LARGE_SIZE_AND_PAD (aspect kept, centred, padded by pad_mode with
// pad_value), with an interpolation drawn from interp_mode (LINEAR when
// none is given); boxes follow. FIT_SMALL_SIZE gives images of varying size
// and is refused by the layer before any record is read.
void ResizeImage(const ResizeParameter& param, cv::Mat* image, std::vector<AnnotatedBox>* boxes);

// Left to right, boxes with it.
void MirrorImage(cv::Mat* image, std::vector<AnnotatedBox>* boxes);

}  // namespace ssd
}  // namespace crema

#endif  // CREMA_OPENCV
#endif  // CREMA_DATA_DETECTION_AUGMENTATION_HPP_
