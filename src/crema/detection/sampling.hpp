// SSD's training-time geometry (weiliu89/caffe's batch_sampler and
// emit_constraint): random crop windows that satisfy constraints against the
// image's ground-truth boxes, and the boxes carried into a window (a crop,
// or the canvas an image is expanded onto). Boxes are in coordinates
// normalised by the image; random draws come from the calling thread's
// generator (Context::rng()), so a seeded prefetch thread repeats them.
#ifndef CREMA_DETECTION_SAMPLING_HPP_
#define CREMA_DETECTION_SAMPLING_HPP_

#include <vector>

#include "crema/detection/boxes.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {
namespace ssd {

// One annotated box of a training image, as an AnnotatedDatum holds it.
struct AnnotatedBox {
  int group_label = 0;
  int instance_id = 0;
  DetectionBox box;
  bool difficult = false;
};

// The boxes of an AnnotatedDatum (BBOX type), group by group.
std::vector<AnnotatedBox> BoxesOf(const AnnotatedDatum& datum);

// Refuses (a user error, message without origin) a sampler whose scales are
// not 0 < min <= max <= 1 or whose aspect ratios are not 0 < min <= max, and
// a constraint whose bounds are outside [0, 1] or inverted.
void CheckBatchSampler(const BatchSampler& sampler);

// A random window: its side scale in [min_scale, max_scale] and aspect ratio
// (width / height) in [min_aspect_ratio, max_aspect_ratio], the ratio
// clamped to [scale^2, 1 / scale^2] so that the window fits, placed
// uniformly inside the unit square.
DetectionBox SampleWindow(const Sampler& sampler);

// Whether some ground-truth box meets every bound the constraint sets:
// Jaccard overlap with the window, the share of the window it covers
// (sample coverage) and the share of itself the window covers (object
// coverage). A constraint that sets none is met by any window.
bool SatisfiesConstraint(const DetectionBox& window, const std::vector<AnnotatedBox>& truths,
                         const SampleConstraint& constraint);

// Every batch sampler's windows: up to max_trials draws each, keeping those
// that satisfy its constraint, at most max_sample of them (0: no limit).
// A sampler with use_original_image false contributes nothing (the fork
// samples from the original image only).
std::vector<DetectionBox> GenerateWindows(
    const std::vector<AnnotatedBox>& truths,
    const google::protobuf::RepeatedPtrField<BatchSampler>& samplers);

// Whether a box survives a crop to `window`: its centre lies inside the
// window (CENTER), or its overlap with the window, as a share of the box,
// is at least emit_overlap (MIN_OVERLAP).
bool MeetsEmitConstraint(const DetectionBox& window, const DetectionBox& box,
                         const EmitConstraint& constraint);

// `box` in the coordinates of `window` (both in the same image's
// coordinates), clipped to the unit square; false when nothing of it is
// left inside the window.
bool ProjectBox(const DetectionBox& window, const DetectionBox& box, DetectionBox* projected);

// The boxes carried into a crop window: those meeting the emit constraint,
// projected into it. With every_box (expansion: the window holds the whole
// image) all boxes are carried.
std::vector<AnnotatedBox> CarryBoxes(const std::vector<AnnotatedBox>& boxes,
                                     const DetectionBox& window, const EmitConstraint& constraint,
                                     bool every_box);

// Mirrors boxes left to right.
void MirrorBoxes(std::vector<AnnotatedBox>* boxes);

// A float uniform in [a, b) from the calling thread's generator (a when a == b).
float UniformFloat(float a, float b);

}  // namespace ssd
}  // namespace crema

#endif  // CREMA_DETECTION_SAMPLING_HPP_
