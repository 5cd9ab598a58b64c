// SSD's box geometry (weiliu89/caffe's conventions): boxes by their corners
// in coordinates normalised by the image size, their overlap, their encoding
// as offsets from a prior box (the three code types) and greedy NMS. Shared
// by DetectionOutput, MultiBoxLoss and the exporter.
#ifndef CREMA_DETECTION_BOXES_HPP_
#define CREMA_DETECTION_BOXES_HPP_

#include <vector>

#include "crema/proto/crema.pb.h"

namespace crema {
namespace ssd {

// A box by its corners, in coordinates normalised by the image size.
struct DetectionBox {
  float xmin = 0, ymin = 0, xmax = 0, ymax = 0;
};

// The area of box (0 when it is inverted), without SSD's +1 for pixels.
float DetectionBoxArea(const DetectionBox& box);
// Intersection over union of two normalised boxes (0 when they are disjoint).
float JaccardOverlap(const DetectionBox& a, const DetectionBox& b);
// Box `offsets` decoded from prior with its four variances, by code_type.
DetectionBox DecodeBox(const DetectionBox& prior, const float* variance,
                       const DetectionBox& offsets, PriorBoxParameter::CodeType code_type,
                       bool variance_encoded_in_target);
// The offsets that DecodeBox turns back into `box`: the regression target of
// a ground-truth box matched to `prior`.
DetectionBox EncodeBox(const DetectionBox& prior, const float* variance, const DetectionBox& box,
                       PriorBoxParameter::CodeType code_type, bool variance_encoded_in_target);
// The indices of the boxes greedy NMS keeps among those scoring above
// score_threshold (the top_k best when top_k > -1), by descending score.
std::vector<int> ApplyNms(const std::vector<DetectionBox>& boxes, const std::vector<float>& scores,
                          float score_threshold, float nms_threshold, float eta, int top_k);

}  // namespace ssd

}  // namespace crema

#endif  // CREMA_DETECTION_BOXES_HPP_
