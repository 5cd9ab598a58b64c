#include "crema/detection/boxes.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "crema/common.hpp"

namespace crema {
namespace ssd {

namespace {

// CORNER: each corner moves by its offset (times its variance).
DetectionBox DecodeCorner(const DetectionBox& prior, const float* v, const DetectionBox& d) {
  return {prior.xmin + v[0] * d.xmin, prior.ymin + v[1] * d.ymin, prior.xmax + v[2] * d.xmax,
          prior.ymax + v[3] * d.ymax};
}

// CENTER_SIZE: the centre moves by offsets times the prior's size; width and
// height scale by exp of their offsets.
DetectionBox DecodeCenterSize(const DetectionBox& prior, const float* v, const DetectionBox& d) {
  const float prior_width = prior.xmax - prior.xmin;
  const float prior_height = prior.ymax - prior.ymin;
  const float center_x = v[0] * d.xmin * prior_width + (prior.xmin + prior.xmax) / 2;
  const float center_y = v[1] * d.ymin * prior_height + (prior.ymin + prior.ymax) / 2;
  const float width = std::exp(v[2] * d.xmax) * prior_width;
  const float height = std::exp(v[3] * d.ymax) * prior_height;
  return {center_x - width / 2, center_y - height / 2, center_x + width / 2, center_y + height / 2};
}

// CORNER_SIZE: each corner moves by its offset times the prior's size.
DetectionBox DecodeCornerSize(const DetectionBox& prior, const float* v, const DetectionBox& d) {
  const float prior_width = prior.xmax - prior.xmin;
  const float prior_height = prior.ymax - prior.ymin;
  return {prior.xmin + v[0] * d.xmin * prior_width, prior.ymin + v[1] * d.ymin * prior_height,
          prior.xmax + v[2] * d.xmax * prior_width, prior.ymax + v[3] * d.ymax * prior_height};
}

}  // namespace

DetectionBox DecodeBox(const DetectionBox& prior, const float* variance,
                       const DetectionBox& offsets, PriorBoxParameter::CodeType code_type,
                       bool variance_encoded_in_target) {
  // Variances already applied by the target encoding count as ones.
  static const float kUnitVariance[4] = {1, 1, 1, 1};
  const float* v = variance_encoded_in_target ? kUnitVariance : variance;
  switch (code_type) {
    case PriorBoxParameter::CORNER:
      return DecodeCorner(prior, v, offsets);
    case PriorBoxParameter::CENTER_SIZE:
      return DecodeCenterSize(prior, v, offsets);
    case PriorBoxParameter::CORNER_SIZE:
      return DecodeCornerSize(prior, v, offsets);
  }
  LOG(FATAL) << "code_type " << code_type << " passed set-up's check";
  return {};
}

namespace {

// The inverse of each Decode above, offsets divided by the variances.
DetectionBox EncodeCorner(const DetectionBox& prior, const float* v, const DetectionBox& box) {
  return {(box.xmin - prior.xmin) / v[0], (box.ymin - prior.ymin) / v[1],
          (box.xmax - prior.xmax) / v[2], (box.ymax - prior.ymax) / v[3]};
}

DetectionBox EncodeCenterSize(const DetectionBox& prior, const float* v, const DetectionBox& box) {
  const float prior_width = prior.xmax - prior.xmin;
  const float prior_height = prior.ymax - prior.ymin;
  const float width = box.xmax - box.xmin, height = box.ymax - box.ymin;
  const float dx = (box.xmin + box.xmax) / 2 - (prior.xmin + prior.xmax) / 2;
  const float dy = (box.ymin + box.ymax) / 2 - (prior.ymin + prior.ymax) / 2;
  return {dx / prior_width / v[0], dy / prior_height / v[1], std::log(width / prior_width) / v[2],
          std::log(height / prior_height) / v[3]};
}

DetectionBox EncodeCornerSize(const DetectionBox& prior, const float* v, const DetectionBox& box) {
  const float prior_width = prior.xmax - prior.xmin;
  const float prior_height = prior.ymax - prior.ymin;
  return {
      (box.xmin - prior.xmin) / prior_width / v[0], (box.ymin - prior.ymin) / prior_height / v[1],
      (box.xmax - prior.xmax) / prior_width / v[2], (box.ymax - prior.ymax) / prior_height / v[3]};
}

}  // namespace

DetectionBox EncodeBox(const DetectionBox& prior, const float* variance, const DetectionBox& box,
                       PriorBoxParameter::CodeType code_type, bool variance_encoded_in_target) {
  static const float kUnitVariance[4] = {1, 1, 1, 1};
  const float* v = variance_encoded_in_target ? kUnitVariance : variance;
  switch (code_type) {
    case PriorBoxParameter::CORNER:
      return EncodeCorner(prior, v, box);
    case PriorBoxParameter::CENTER_SIZE:
      return EncodeCenterSize(prior, v, box);
    case PriorBoxParameter::CORNER_SIZE:
      return EncodeCornerSize(prior, v, box);
  }
  LOG(FATAL) << "code_type " << code_type << " passed set-up's check";
  return {};
}

std::vector<int> NmsCandidates(const std::vector<float>& scores, float score_threshold, int top_k) {
  std::vector<std::pair<float, int>> ranked;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] > score_threshold) ranked.emplace_back(scores[i], static_cast<int>(i));
  }
  // Only the top_k first are put in order (and kept).
  const auto before = [](const std::pair<float, int>& a, const std::pair<float, int>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  if (top_k > -1 && top_k < static_cast<int>(ranked.size())) {
    std::partial_sort(ranked.begin(), ranked.begin() + top_k, ranked.end(), before);
    ranked.resize(top_k);
  } else {
    std::sort(ranked.begin(), ranked.end(), before);
  }
  std::vector<int> candidates;
  candidates.reserve(ranked.size());
  for (const auto& entry : ranked) candidates.push_back(entry.second);
  return candidates;
}

std::vector<int> GreedyNms(const std::vector<DetectionBox>& boxes,
                           const std::vector<int>& candidates, float nms_threshold, float eta) {
  // The kept boxes beside their indices, with their areas (each candidate
  // meets every kept box).
  struct KeptBox {
    DetectionBox box;
    float area;
  };
  std::vector<int> kept;
  std::vector<KeptBox> kept_boxes;
  float threshold = nms_threshold;
  for (const int candidate : candidates) {
    const DetectionBox& box = boxes[candidate];
    const float area = DetectionBoxArea(box);
    const bool keep = std::all_of(kept_boxes.begin(), kept_boxes.end(), [&](const KeptBox& k) {
      return JaccardOverlapOfAreas(box, area, k.box, k.area) <= threshold;
    });
    if (!keep) continue;
    kept.push_back(candidate);
    kept_boxes.push_back({box, area});
    if (eta < 1 && threshold > 0.5f) threshold *= eta;
  }
  return kept;
}

std::vector<int> ApplyNms(const std::vector<DetectionBox>& boxes, const std::vector<float>& scores,
                          float score_threshold, float nms_threshold, float eta, int top_k) {
  return GreedyNms(boxes, NmsCandidates(scores, score_threshold, top_k), nms_threshold, eta);
}

}  // namespace ssd

}  // namespace crema
