// SSD's box geometry (weiliu89/caffe's conventions): boxes by their corners
// in coordinates normalised by the image size, their overlap, their encoding
// as offsets from a prior box (the three code types) and greedy NMS. Shared
// by DetectionOutput, MultiBoxLoss and the exporter.
#ifndef CREMA_DETECTION_BOXES_HPP_
#define CREMA_DETECTION_BOXES_HPP_

#include <algorithm>
#include <vector>

#include "crema/proto/crema.pb.h"

namespace crema {
namespace ssd {

// A box by its corners, in coordinates normalised by the image size.
struct DetectionBox {
  float xmin = 0, ymin = 0, xmax = 0, ymax = 0;
};

// Each coordinate clamped to [0, 1] (normalized coordinates).
inline DetectionBox ClipToUnitSquare(const DetectionBox& box) {
  auto clamp = [](float v) { return v < 0 ? 0.0f : (v > 1 ? 1.0f : v); };
  return {clamp(box.xmin), clamp(box.ymin), clamp(box.xmax), clamp(box.ymax)};
}

// The area of box (0 when it is inverted), without SSD's +1 for pixels.
inline float DetectionBoxArea(const DetectionBox& box) {
  if (box.xmax < box.xmin || box.ymax < box.ymin) return 0;
  return (box.xmax - box.xmin) * (box.ymax - box.ymin);
}
// Intersection over union of two normalised boxes of the given areas
// (DetectionBoxArea; 0 when the boxes are disjoint).
inline float JaccardOverlapOfAreas(const DetectionBox& a, float area_a, const DetectionBox& b,
                                   float area_b) {
  const float width = std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin);
  const float height = std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin);
  if (width <= 0 || height <= 0) return 0;
  const float intersection = width * height;
  return intersection / (area_a + area_b - intersection);
}
inline float JaccardOverlap(const DetectionBox& a, const DetectionBox& b) {
  return JaccardOverlapOfAreas(a, DetectionBoxArea(a), b, DetectionBoxArea(b));
}
// Box `offsets` decoded from prior with its four variances, by code_type.
DetectionBox DecodeBox(const DetectionBox& prior, const float* variance,
                       const DetectionBox& offsets, PriorBoxParameter::CodeType code_type,
                       bool variance_encoded_in_target);
// The offsets that DecodeBox turns back into `box`: the regression target of
// a ground-truth box matched to `prior`.
DetectionBox EncodeBox(const DetectionBox& prior, const float* variance, const DetectionBox& box,
                       PriorBoxParameter::CodeType code_type, bool variance_encoded_in_target);
// The indices of the boxes scoring above score_threshold, best first (the
// lower index first among equal scores); only the top_k best when top_k > -1.
std::vector<int> NmsCandidates(const std::vector<float>& scores, float score_threshold, int top_k);
// Greedy NMS over `candidates` (indices into boxes, best first): each is
// kept unless it overlaps a kept one by more than the threshold, which
// shrinks by eta (while above 0.5) after each box kept. The kept indices,
// best first.
std::vector<int> GreedyNms(const std::vector<DetectionBox>& boxes,
                           const std::vector<int>& candidates, float nms_threshold, float eta);
// The indices of the boxes greedy NMS keeps among those scoring above
// score_threshold (the top_k best when top_k > -1), by descending score.
std::vector<int> ApplyNms(const std::vector<DetectionBox>& boxes, const std::vector<float>& scores,
                          float score_threshold, float nms_threshold, float eta, int top_k);

}  // namespace ssd

}  // namespace crema

#endif  // CREMA_DETECTION_BOXES_HPP_
