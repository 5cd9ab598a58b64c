#include "crema/detection/sampling.hpp"

#include <algorithm>
#include <cmath>

#include "crema/common.hpp"
#include "crema/util/math_functions.hpp"

namespace crema {
namespace ssd {

namespace {

DetectionBox BoxOf(const NormalizedBBox& box) {
  DetectionBox out;
  out.xmin = box.xmin();
  out.ymin = box.ymin();
  out.xmax = box.xmax();
  out.ymax = box.ymax();
  return out;
}

// The area two boxes share (0 when disjoint).
float IntersectionArea(const DetectionBox& a, const DetectionBox& b) {
  const float width = std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin);
  const float height = std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin);
  return width > 0 && height > 0 ? width * height : 0.f;
}

// Whether value lies within the bounds the constraint sets (has_min/has_max).
bool Within(float value, bool has_min, float min, bool has_max, float max) {
  return !(has_min && value < min) && !(has_max && value > max);
}

void CheckUnitBound(bool has, float value, const char* name) {
  CREMA_REQUIRE(!has || (value >= 0 && value <= 1), "batch_sampler: sample_constraint "
                                                        << name << " " << value
                                                        << " is outside [0, 1]");
}

}  // namespace

std::vector<AnnotatedBox> BoxesOf(const AnnotatedDatum& datum) {
  std::vector<AnnotatedBox> boxes;
  for (const AnnotationGroup& group : datum.annotation_group()) {
    for (const Annotation& annotation : group.annotation()) {
      AnnotatedBox box;
      box.group_label = group.group_label();
      box.instance_id = annotation.instance_id();
      box.box = BoxOf(annotation.bbox());
      box.difficult = annotation.bbox().difficult();
      boxes.push_back(box);
    }
  }
  return boxes;
}

void CheckBatchSampler(const BatchSampler& batch_sampler) {
  const Sampler& s = batch_sampler.sampler();
  CREMA_REQUIRE(s.min_scale() > 0 && s.min_scale() <= s.max_scale() && s.max_scale() <= 1,
                "batch_sampler: the scales must satisfy 0 < min_scale <= max_scale <= 1; got "
                    << s.min_scale() << " and " << s.max_scale());
  CREMA_REQUIRE(s.min_aspect_ratio() > 0 && s.min_aspect_ratio() <= s.max_aspect_ratio(),
                "batch_sampler: the aspect ratios must satisfy 0 < min_aspect_ratio <= "
                "max_aspect_ratio; got "
                    << s.min_aspect_ratio() << " and " << s.max_aspect_ratio());
  const SampleConstraint& c = batch_sampler.sample_constraint();
  CheckUnitBound(c.has_min_jaccard_overlap(), c.min_jaccard_overlap(), "min_jaccard_overlap");
  CheckUnitBound(c.has_max_jaccard_overlap(), c.max_jaccard_overlap(), "max_jaccard_overlap");
  CheckUnitBound(c.has_min_sample_coverage(), c.min_sample_coverage(), "min_sample_coverage");
  CheckUnitBound(c.has_max_sample_coverage(), c.max_sample_coverage(), "max_sample_coverage");
  CheckUnitBound(c.has_min_object_coverage(), c.min_object_coverage(), "min_object_coverage");
  CheckUnitBound(c.has_max_object_coverage(), c.max_object_coverage(), "max_object_coverage");
}

float UniformFloat(float a, float b) {
  float value = a;
  rng_uniform<float>(1, a, b, &value);
  return value;
}

DetectionBox SampleWindow(const Sampler& sampler) {
  const float scale = UniformFloat(sampler.min_scale(), sampler.max_scale());
  float aspect = UniformFloat(sampler.min_aspect_ratio(), sampler.max_aspect_ratio());
  // Width = scale * sqrt(aspect) and height = scale / sqrt(aspect) stay <= 1.
  aspect = std::max(aspect, scale * scale);
  aspect = std::min(aspect, 1 / (scale * scale));
  const float width = std::min(1.f, scale * std::sqrt(aspect));
  const float height = std::min(1.f, scale / std::sqrt(aspect));
  DetectionBox window;
  window.xmin = UniformFloat(0, 1 - width);
  window.ymin = UniformFloat(0, 1 - height);
  window.xmax = window.xmin + width;
  window.ymax = window.ymin + height;
  return window;
}

bool SatisfiesConstraint(const DetectionBox& window, const std::vector<AnnotatedBox>& truths,
                         const SampleConstraint& c) {
  const bool jaccard = c.has_min_jaccard_overlap() || c.has_max_jaccard_overlap();
  const bool sample = c.has_min_sample_coverage() || c.has_max_sample_coverage();
  const bool object = c.has_min_object_coverage() || c.has_max_object_coverage();
  if (!jaccard && !sample && !object) return true;
  const float window_area = DetectionBoxArea(window);
  for (const AnnotatedBox& truth : truths) {
    const float shared = IntersectionArea(window, truth.box);
    const float truth_area = DetectionBoxArea(truth.box);
    if (jaccard &&
        !Within(JaccardOverlap(window, truth.box), c.has_min_jaccard_overlap(),
                c.min_jaccard_overlap(), c.has_max_jaccard_overlap(), c.max_jaccard_overlap())) {
      continue;
    }
    if (sample &&
        !Within(window_area > 0 ? shared / window_area : 0.f, c.has_min_sample_coverage(),
                c.min_sample_coverage(), c.has_max_sample_coverage(), c.max_sample_coverage())) {
      continue;
    }
    if (object &&
        !Within(truth_area > 0 ? shared / truth_area : 0.f, c.has_min_object_coverage(),
                c.min_object_coverage(), c.has_max_object_coverage(), c.max_object_coverage())) {
      continue;
    }
    return true;
  }
  return false;
}

std::vector<DetectionBox> GenerateWindows(
    const std::vector<AnnotatedBox>& truths,
    const google::protobuf::RepeatedPtrField<BatchSampler>& samplers) {
  std::vector<DetectionBox> windows;
  for (const BatchSampler& sampler : samplers) {
    if (!sampler.use_original_image()) continue;
    uint32_t found = 0;
    for (uint32_t trial = 0; trial < sampler.max_trials(); ++trial) {
      if (sampler.max_sample() > 0 && found >= sampler.max_sample()) break;
      const DetectionBox window = SampleWindow(sampler.sampler());
      if (!SatisfiesConstraint(window, truths, sampler.sample_constraint())) continue;
      windows.push_back(window);
      ++found;
    }
  }
  return windows;
}

bool MeetsEmitConstraint(const DetectionBox& window, const DetectionBox& box,
                         const EmitConstraint& constraint) {
  if (constraint.emit_type() == EmitConstraint::CENTER) {
    const float x = (box.xmin + box.xmax) / 2;
    const float y = (box.ymin + box.ymax) / 2;
    return x >= window.xmin && x <= window.xmax && y >= window.ymin && y <= window.ymax;
  }
  const float area = DetectionBoxArea(box);
  return area > 0 && IntersectionArea(window, box) / area > constraint.emit_overlap();
}

bool ProjectBox(const DetectionBox& window, const DetectionBox& box, DetectionBox* projected) {
  if (box.xmin >= window.xmax || box.xmax <= window.xmin || box.ymin >= window.ymax ||
      box.ymax <= window.ymin) {
    return false;
  }
  const float width = window.xmax - window.xmin;
  const float height = window.ymax - window.ymin;
  const auto clip = [](float v) { return std::min(1.f, std::max(0.f, v)); };
  projected->xmin = clip((box.xmin - window.xmin) / width);
  projected->ymin = clip((box.ymin - window.ymin) / height);
  projected->xmax = clip((box.xmax - window.xmin) / width);
  projected->ymax = clip((box.ymax - window.ymin) / height);
  return DetectionBoxArea(*projected) > 0;
}

std::vector<AnnotatedBox> CarryBoxes(const std::vector<AnnotatedBox>& boxes,
                                     const DetectionBox& window, const EmitConstraint& constraint,
                                     bool every_box) {
  std::vector<AnnotatedBox> carried;
  for (const AnnotatedBox& box : boxes) {
    if (!every_box && !MeetsEmitConstraint(window, box.box, constraint)) continue;
    AnnotatedBox moved = box;
    if (ProjectBox(window, box.box, &moved.box)) carried.push_back(moved);
  }
  return carried;
}

void MirrorBoxes(std::vector<AnnotatedBox>* boxes) {
  for (AnnotatedBox& box : *boxes) {
    const float xmin = box.box.xmin;
    box.box.xmin = 1 - box.box.xmax;
    box.box.xmax = 1 - xmin;
  }
}

}  // namespace ssd
}  // namespace crema
