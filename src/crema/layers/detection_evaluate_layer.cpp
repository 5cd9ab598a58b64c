#include "crema/layers/detection_evaluate_layer.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <utility>

#include "crema/detection/matching.hpp"

namespace crema {

namespace {

struct Detection {
  int image = 0, label = 0;
  float score = 0;
  ssd::DetectionBox box;
};

}  // namespace

template <typename Dtype>
void DetectionEvaluateLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                               const std::vector<Blob<Dtype>*>& top) {
  const DetectionEvaluateParameter& p = this->layer_param_.detection_evaluate_param();
  CREMA_LAYER_REQUIRE(p.num_classes() >= 1 && p.num_classes() <= INT_MAX / 2,
                      "needs detection_evaluate_param.num_classes of at least 1, got "
                          << p.num_classes());
  num_classes_ = static_cast<int>(p.num_classes());
  background_label_ = static_cast<int>(p.background_label_id());
  overlap_threshold_ = p.overlap_threshold();
  CREMA_LAYER_REQUIRE(overlap_threshold_ > 0 && overlap_threshold_ <= 1,
                      "overlap_threshold " << overlap_threshold_ << " is not in (0, 1]");
  evaluate_difficult_ = p.evaluate_difficult_gt();
  CREMA_LAYER_REQUIRE(p.name_size_file().empty() && !p.has_resize_param(),
                      "name_size_file and resize_param (evaluation in pixels) are not supported: "
                      "boxes are compared normalised");
}

template <typename Dtype>
void DetectionEvaluateLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->count() % 7 == 0,
                      "bottom 0 (detections) has shape " << bottom[0]->shape_string()
                                                         << "; expected rows of 7");
  CREMA_LAYER_REQUIRE(bottom[1]->count() % 8 == 0,
                      "bottom 1 (ground truth) has shape " << bottom[1]->shape_string()
                                                           << "; expected rows of 8");
  // The number of rows depends on the data: set at each forward.
  const int classes = num_classes_ - (background_label_ < num_classes_ ? 1 : 0);
  top[0]->Reshape(std::vector<int>{1, 1, std::max(classes, 1), 5});
}

template <typename Dtype>
void DetectionEvaluateLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                const std::vector<Blob<Dtype>*>& top) {
  const std::vector<float> truth_rows(bottom[1]->cpu_data(),
                                      bottom[1]->cpu_data() + bottom[1]->count());
  // Images are numbered as the ground truth numbers them.
  int num_images = 0;
  for (int r = 0; r < bottom[1]->count() / 8; ++r) {
    num_images = std::max(num_images, static_cast<int>(truth_rows[8 * r]) + 1);
  }
  const Dtype* d = bottom[0]->cpu_data();
  std::vector<Detection> detections;
  for (int r = 0; r < bottom[0]->count() / 7; ++r) {
    const Dtype* row = d + 7 * r;
    // DetectionOutput's "nothing kept" rows: -1 everywhere but the image.
    if (row[0] == -1 || row[1] == -1) continue;
    detections.push_back({static_cast<int>(row[0]), static_cast<int>(row[1]), float(row[2]),
                          {float(row[3]), float(row[4]), float(row[5]), float(row[6])}});
    num_images = std::max(num_images, detections.back().image + 1);
  }
  const std::string what = "layer '" + this->layer_param_.name() + "' (DetectionEvaluate)";
  const auto truths = ssd::ReadGroundTruths(truth_rows.data(), bottom[1]->count() / 8, num_images,
                                            true, background_label_, what);
  std::stable_sort(detections.begin(), detections.end(), [](const Detection& a, const Detection& b) {
    if (a.image != b.image) return a.image < b.image;
    if (a.label != b.label) return a.label < b.label;
    return a.score > b.score;
  });
  std::vector<std::vector<float>> rows;
  for (int label = 0; label < num_classes_; ++label) {
    if (label == background_label_) continue;
    int count = 0;
    for (const auto& image : truths) {
      for (const auto& truth : image) {
        count += truth.label == label && (evaluate_difficult_ || !truth.difficult);
      }
    }
    rows.push_back({-1, float(label), float(count), -1, -1});
  }
  std::vector<std::vector<bool>> claimed(truths.size());
  for (size_t i = 0; i < truths.size(); ++i) claimed[i].assign(truths[i].size(), false);
  for (const Detection& detection : detections) {
    float best = 0;
    int best_truth = -1;
    const auto& image = truths[detection.image];
    for (size_t t = 0; t < image.size(); ++t) {
      if (image[t].label != detection.label) continue;
      const float overlap = ssd::JaccardOverlap(detection.box, image[t].box);
      if (overlap > best) best = overlap, best_truth = static_cast<int>(t);
    }
    float tp = 0, fp = 1;
    if (best_truth >= 0 && best >= overlap_threshold_) {
      if (!evaluate_difficult_ && image[best_truth].difficult) {
        fp = 0;  // a difficult box neither found nor missed
      } else if (!claimed[detection.image][best_truth]) {
        claimed[detection.image][best_truth] = true;
        tp = 1, fp = 0;
      }
    }
    rows.push_back({float(detection.image), float(detection.label), detection.score, tp, fp});
  }
  top[0]->Reshape(std::vector<int>{1, 1, static_cast<int>(rows.size()), 5});
  Dtype* out = top[0]->mutable_cpu_data();
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int k = 0; k < 5; ++k) out[5 * r + k] = Dtype(rows[r][k]);
  }
}

INSTANTIATE_CLASS(DetectionEvaluateLayer);
REGISTER_LAYER_CLASS(DetectionEvaluate);

}  // namespace crema
