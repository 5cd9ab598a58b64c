#include "crema/layers/detection_output_layer.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <utility>

namespace crema {

template <typename Dtype>
void DetectionOutputLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom.size() == 3,
                      "takes 3 bottoms (loc, conf, prior); a 4th bottom (refined priors, as in "
                      "RefineDet's fork) is not supported");
  const DetectionOutputParameter& param = this->layer_param_.detection_output_param();
  CREMA_LAYER_REQUIRE(
      param.num_classes() > 0 && param.num_classes() <= INT_MAX / 4,
      "needs detection_output_param.num_classes of at least 1, got " << param.num_classes());
  num_classes_ = static_cast<int>(param.num_classes());
  share_location_ = param.share_location();
  num_loc_classes_ = share_location_ ? 1 : num_classes_;
  background_label_id_ = param.background_label_id();
  CREMA_LAYER_REQUIRE(background_label_id_ < num_classes_,
                      "background_label_id " << background_label_id_
                                             << " must be below num_classes " << num_classes_);
  code_type_ = param.code_type();
  variance_encoded_in_target_ = param.variance_encoded_in_target();
  clip_ = param.clip();
  keep_top_k_ = param.keep_top_k();
  CREMA_LAYER_REQUIRE(keep_top_k_ == -1 || keep_top_k_ > 0,
                      "keep_top_k must be -1 (all) or positive, got " << keep_top_k_);
  confidence_threshold_ =
      param.has_confidence_threshold() ? param.confidence_threshold() : -FLT_MAX;
  CREMA_LAYER_REQUIRE(std::isfinite(confidence_threshold_),
                      "confidence_threshold must be finite, got " << confidence_threshold_);
  ReadNmsParameters();
  WarnAboutOutputsNotWritten();
}

template <typename Dtype>
void DetectionOutputLayer<Dtype>::ReadNmsParameters() {
  const NonMaximumSuppressionParameter& nms =
      this->layer_param_.detection_output_param().nms_param();
  nms_threshold_ = nms.nms_threshold();
  CREMA_LAYER_REQUIRE(nms_threshold_ >= 0 && nms_threshold_ <= 1,
                      "nms_threshold must lie in [0, 1], got " << nms_threshold_);
  eta_ = nms.eta();
  CREMA_LAYER_REQUIRE(eta_ > 0 && eta_ <= 1, "eta must lie in (0, 1], got " << eta_);
  top_k_ = nms.has_top_k() ? nms.top_k() : -1;
  CREMA_LAYER_REQUIRE(top_k_ == -1 || top_k_ > 0,
                      "nms_param.top_k must be -1 (all) or positive, got " << top_k_);
}

// The fork can write detections to files and draw them; Crema does neither.
template <typename Dtype>
void DetectionOutputLayer<Dtype>::WarnAboutOutputsNotWritten() const {
  const DetectionOutputParameter& param = this->layer_param_.detection_output_param();
  if (param.has_save_output_param() || param.visualize() || param.has_save_file()) {
    LOG(WARNING) << "layer '" << this->layer_param_.name() << "' (" << this->type()
                 << "): save_output_param, save_file and visualize are ignored; Crema writes "
                    "no detection files and draws nothing";
  }
}

template <typename Dtype>
void DetectionOutputLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& loc = *bottom[0];
  const Blob<Dtype>& conf = *bottom[1];
  const Blob<Dtype>& prior = *bottom[2];
  CREMA_LAYER_REQUIRE(
      prior.num_axes() == 3 && prior.shape(0) == 1 && prior.shape(1) == 2 &&
          prior.shape(2) % 4 == 0,
      "the prior bottom must be [1, 2, 4 * num_priors], got " << prior.shape_string());
  num_priors_ = prior.shape(2) / 4;
  CREMA_LAYER_REQUIRE(loc.num_axes() >= 2 && conf.num_axes() >= 2 && loc.shape(0) == conf.shape(0),
                      "loc " << loc.shape_string() << " and conf " << conf.shape_string()
                             << " must have the same number of images");
  const int64_t loc_count = int64_t{num_priors_} * num_loc_classes_ * 4;
  CREMA_LAYER_REQUIRE(loc.count(1) == loc_count,
                      "loc has " << loc.count(1) << " values per image, but " << num_priors_
                                 << " priors with " << num_loc_classes_ << " location classes need "
                                 << loc_count);
  const int64_t conf_count = int64_t{num_priors_} * num_classes_;
  CREMA_LAYER_REQUIRE(conf.count(1) == conf_count,
                      "conf has " << conf.count(1) << " values per image, but " << num_priors_
                                  << " priors with " << num_classes_ << " classes need "
                                  << conf_count);
  // The number of detections is known only after forward.
  top[0]->Reshape({1, 1, 1, 7});
}

template <typename Dtype>
void DetectionOutputLayer<Dtype>::Decode(const Blob<Dtype>& loc, const Blob<Dtype>& prior, int n,
                                         int loc_class, const std::vector<int>& priors,
                                         ImageBoxes* image) const {
  const Dtype* loc_data = loc.cpu_data() + loc.offset(n);
  const Dtype* prior_data = prior.cpu_data();
  const Dtype* variance_data = prior_data + num_priors_ * 4;
  std::vector<ssd::DetectionBox>& boxes = image->boxes[loc_class];
  std::vector<bool>& decoded = image->decoded[loc_class];
  for (const int p : priors) {
    if (decoded[p]) continue;
    const Dtype* q = prior_data + p * 4;
    const ssd::DetectionBox prior_box{float(q[0]), float(q[1]), float(q[2]), float(q[3])};
    const float variance[4] = {float(variance_data[p * 4]), float(variance_data[p * 4 + 1]),
                               float(variance_data[p * 4 + 2]), float(variance_data[p * 4 + 3])};
    const Dtype* d = loc_data + (p * num_loc_classes_ + loc_class) * 4;
    const ssd::DetectionBox offsets{float(d[0]), float(d[1]), float(d[2]), float(d[3])};
    ssd::DetectionBox box =
        ssd::DecodeBox(prior_box, variance, offsets, code_type_, variance_encoded_in_target_);
    if (clip_) box = ssd::ClipToUnitSquare(box);
    boxes[p] = box;
    decoded[p] = true;
  }
}

// scores[c][p]: class c's score of prior p in image n.
template <typename Dtype>
std::vector<std::vector<float>> DetectionOutputLayer<Dtype>::ImageScores(const Blob<Dtype>& conf,
                                                                         int n) const {
  const Dtype* conf_data = conf.cpu_data() + conf.offset(n);
  std::vector<std::vector<float>> scores(num_classes_, std::vector<float>(num_priors_));
  for (int p = 0; p < num_priors_; ++p) {
    for (int c = 0; c < num_classes_; ++c) scores[c][p] = conf_data[p * num_classes_ + c];
  }
  return scores;
}

template <typename Dtype>
typename DetectionOutputLayer<Dtype>::KeptIndices DetectionOutputLayer<Dtype>::DetectImage(
    const Blob<Dtype>& loc, const Blob<Dtype>& prior, int n,
    const std::vector<std::vector<float>>& scores, ImageBoxes* image) const {
  image->boxes.assign(num_loc_classes_, std::vector<ssd::DetectionBox>(num_priors_));
  image->decoded.assign(num_loc_classes_, std::vector<bool>(num_priors_, false));
  KeptIndices kept;
  for (int c = 0; c < num_classes_; ++c) {
    if (c == background_label_id_) continue;
    const int loc_class = share_location_ ? 0 : c;
    const std::vector<int> candidates =
        ssd::NmsCandidates(scores[c], confidence_threshold_, top_k_);
    Decode(loc, prior, n, loc_class, candidates, image);
    std::vector<int> indices =
        ssd::GreedyNms(image->boxes[loc_class], candidates, nms_threshold_, eta_);
    if (!indices.empty()) kept[c] = std::move(indices);
  }
  KeepTopK(scores, &kept);
  return kept;
}

template <typename Dtype>
void DetectionOutputLayer<Dtype>::KeepTopK(const std::vector<std::vector<float>>& scores,
                                           KeptIndices* kept) const {
  // (score, (label, index)) of every kept box.
  std::vector<std::pair<float, std::pair<int, int>>> ranked;
  for (const auto& entry : *kept) {
    for (int index : entry.second)
      ranked.push_back({scores[entry.first][index], {entry.first, index}});
  }
  if (keep_top_k_ == -1 || static_cast<int>(ranked.size()) <= keep_top_k_) return;
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const std::pair<float, std::pair<int, int>>& a,
         const std::pair<float, std::pair<int, int>>& b) { return a.first > b.first; });
  ranked.resize(keep_top_k_);
  kept->clear();
  for (const auto& entry : ranked) (*kept)[entry.second.first].push_back(entry.second.second);
}

template <typename Dtype>
void DetectionOutputLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  const int num = bottom[0]->shape(0);
  std::vector<ImageBoxes> boxes(num);
  std::vector<std::vector<std::vector<float>>> scores(num);
  std::vector<KeptIndices> kept(num);
  int num_kept = 0;
  for (int n = 0; n < num; ++n) {
    scores[n] = ImageScores(*bottom[1], n);
    kept[n] = DetectImage(*bottom[0], *bottom[2], n, scores[n], &boxes[n]);
    for (const auto& entry : kept[n]) num_kept += static_cast<int>(entry.second.size());
  }
  if (num_kept == 0) {
    top[0]->Reshape({1, 1, num, 7});
    Dtype* row = top[0]->mutable_cpu_data();
    cpu_set(top[0]->count(), Dtype(-1), row);
    for (int n = 0; n < num; ++n) row[n * 7] = n;
    return;
  }
  top[0]->Reshape({1, 1, num_kept, 7});
  Dtype* row = top[0]->mutable_cpu_data();
  for (int n = 0; n < num; ++n) {
    for (const auto& entry : kept[n]) {
      const int label = entry.first;
      const std::vector<ssd::DetectionBox>& class_boxes =
          boxes[n].boxes[share_location_ ? 0 : label];
      for (int index : entry.second) {
        const ssd::DetectionBox& box = class_boxes[index];
        const Dtype values[7] = {Dtype(n),        Dtype(label),    Dtype(scores[n][label][index]),
                                 Dtype(box.xmin), Dtype(box.ymin), Dtype(box.xmax),
                                 Dtype(box.ymax)};
        std::copy(values, values + 7, row);
        row += 7;
      }
    }
  }
}

// Detections are not differentiable here (the fork has no backward either).
template <typename Dtype>
void DetectionOutputLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  const bool asked =
      std::any_of(propagate_down.begin(), propagate_down.end(), [](bool down) { return down; });
  CREMA_LAYER_REQUIRE(!asked, "has no backward pass (it is for inference only)");
}

#ifndef CREMA_CUDA
STUB_GPU(DetectionOutputLayer);
#endif

INSTANTIATE_CLASS(DetectionOutputLayer);
REGISTER_LAYER_CLASS(DetectionOutput);

}  // namespace crema
