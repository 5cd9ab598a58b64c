#include "crema/layers/multibox_loss_layer.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>

namespace crema {

template <typename Dtype>
void MultiBoxLossLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::LayerSetUp(bottom, top);
  ReadParameters();
}

template <typename Dtype>
void MultiBoxLossLayer<Dtype>::ReadParameters() {
  const MultiBoxLossParameter& p = this->layer_param_.multibox_loss_param();
  CREMA_LAYER_REQUIRE(
      p.num_classes() >= 1 && p.num_classes() <= INT_MAX / 4,
      "needs multibox_loss_param.num_classes of at least 1, got " << p.num_classes());
  num_classes_ = static_cast<int>(p.num_classes());
  background_label_ = static_cast<int>(p.background_label_id());
  CREMA_LAYER_REQUIRE(background_label_ < num_classes_,
                      "background_label_id " << background_label_ << " is not one of the "
                                             << num_classes_ << " classes");
  share_location_ = p.share_location();
  num_loc_classes_ = share_location_ ? 1 : num_classes_;
  per_prediction_ = p.match_type() == MultiBoxLossParameter::PER_PREDICTION;
  overlap_threshold_ = p.overlap_threshold();
  use_prior_for_matching_ = p.use_prior_for_matching();
  CREMA_LAYER_REQUIRE(use_prior_for_matching_ || share_location_,
                      "matching by predictions (use_prior_for_matching: false) needs "
                      "share_location: true");
  use_difficult_gt_ = p.use_difficult_gt();
  // do_neg_mining is the fork's older spelling of mining_type MAX_NEGATIVE / NONE.
  MultiBoxLossParameter::MiningType mining = p.mining_type();
  if (p.has_do_neg_mining()) {
    const MultiBoxLossParameter::MiningType said =
        p.do_neg_mining() ? MultiBoxLossParameter::MAX_NEGATIVE : MultiBoxLossParameter::NONE;
    CREMA_LAYER_REQUIRE(
        !p.has_mining_type() || (mining != MultiBoxLossParameter::NONE) == p.do_neg_mining(),
        "do_neg_mining: " << (p.do_neg_mining() ? "true" : "false") << " contradicts mining_type "
                          << MultiBoxLossParameter::MiningType_Name(mining));
    if (!p.has_mining_type()) mining = said;
  }
  mining_ = mining;
  neg_pos_ratio_ = p.neg_pos_ratio();
  neg_overlap_ = p.neg_overlap();
  CREMA_LAYER_REQUIRE(mining_ != MultiBoxLossParameter::MAX_NEGATIVE ||
                          (std::isfinite(neg_pos_ratio_) && neg_pos_ratio_ > 0),
                      "neg_pos_ratio is " << neg_pos_ratio_ << "; it must be positive");
  if (mining_ == MultiBoxLossParameter::HARD_EXAMPLE) {
    sample_size_ = p.sample_size();
    CREMA_LAYER_REQUIRE(sample_size_ > 0,
                        "sample_size is " << sample_size_ << "; HARD_EXAMPLE needs a positive one");
    mining_nms_threshold_ = p.has_nms_param() ? p.nms_param().nms_threshold() : 0.f;
    CREMA_LAYER_REQUIRE(
        mining_nms_threshold_ >= 0 && mining_nms_threshold_ <= 1,
        "nms_param.nms_threshold is " << mining_nms_threshold_ << "; it must be in [0, 1]");
    CREMA_LAYER_REQUIRE(mining_nms_threshold_ == 0 || share_location_,
                        "HARD_EXAMPLE with nms_param needs share_location: true");
  }
  CREMA_LAYER_REQUIRE(!p.bp_inside(), "bp_inside is not supported");
  code_type_ = p.code_type();
  encode_variance_in_target_ = p.encode_variance_in_target();
  map_object_to_agnostic_ = p.map_object_to_agnostic();
  CREMA_LAYER_REQUIRE(
      !map_object_to_agnostic_ || num_classes_ == 2,
      "map_object_to_agnostic needs num_classes 2 (background and object), got " << num_classes_);
  ignore_cross_boundary_ = p.ignore_cross_boundary_bbox();
  smooth_l1_ = p.loc_loss_type() == MultiBoxLossParameter::SMOOTH_L1;
  softmax_ = p.conf_loss_type() == MultiBoxLossParameter::SOFTMAX;
  loc_weight_ = p.loc_weight();
  normalization_ = this->NormalizationOf(this->layer_param_.loss_param(), LossParameter::VALID);
}

template <typename Dtype>
void MultiBoxLossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  const Blob<Dtype>& prior = *bottom[2];
  CREMA_LAYER_REQUIRE(prior.num_axes() >= 3 && prior.shape(1) == 2 && prior.count(2) % 4 == 0,
                      "bottom 2 (priors) has shape " << prior.shape_string()
                                                     << "; expected [1, 2, num_priors * 4]");
  num_priors_ = prior.count(2) / 4;
  CREMA_LAYER_REQUIRE(
      bottom[0]->count(1) == static_cast<int64_t>(num_priors_) * num_loc_classes_ * 4,
      "bottom 0 (loc) holds " << bottom[0]->count(1) << " values per image; " << num_priors_
                              << " priors x " << num_loc_classes_ << " x 4 expected");
  CREMA_LAYER_REQUIRE(bottom[1]->count(1) == static_cast<int64_t>(num_priors_) * num_classes_,
                      "bottom 1 (conf) holds " << bottom[1]->count(1) << " values per image; "
                                               << num_priors_ << " priors x " << num_classes_
                                               << " classes expected");
  CREMA_LAYER_REQUIRE(bottom[3]->count() % 8 == 0, "bottom 3 (ground truth) has shape "
                                                       << bottom[3]->shape_string()
                                                       << "; expected rows of 8");
  loc_gradient_.ReshapeLike(*bottom[0]);
  conf_gradient_.ReshapeLike(*bottom[1]);
}

template <typename Dtype>
std::vector<ssd::DetectionBox> MultiBoxLossLayer<Dtype>::Priors(const Blob<Dtype>& prior) const {
  const Dtype* corners = prior.cpu_data();
  std::vector<ssd::DetectionBox> priors(num_priors_);
  for (int p = 0; p < num_priors_; ++p) {
    const Dtype* c = corners + 4 * p;
    priors[p] = {float(c[0]), float(c[1]), float(c[2]), float(c[3])};
  }
  return priors;
}

template <typename Dtype>
std::vector<ssd::DetectionBox> MultiBoxLossLayer<Dtype>::PredictedBoxes(const Blob<Dtype>& loc,
                                                                        const Blob<Dtype>& prior,
                                                                        int n) const {
  const std::vector<ssd::DetectionBox> priors = Priors(prior);
  const Dtype* variances = prior.cpu_data() + prior.count(2);
  const Dtype* offsets = loc.cpu_data() + static_cast<size_t>(n) * loc.count(1);
  std::vector<ssd::DetectionBox> boxes(num_priors_);
  for (int p = 0; p < num_priors_; ++p) {
    const float v[4] = {float(variances[4 * p]), float(variances[4 * p + 1]),
                        float(variances[4 * p + 2]), float(variances[4 * p + 3])};
    const Dtype* d = offsets + 4 * p;
    boxes[p] = ssd::DecodeBox(priors[p], v, {float(d[0]), float(d[1]), float(d[2]), float(d[3])},
                              code_type_, encode_variance_in_target_);
  }
  return boxes;
}

// SOFTMAX: -log softmax(scores)[label], gradient softmax - onehot(label).
// LOGISTIC: the sum over classes of sigmoid cross-entropy against
// onehot(label), gradient sigmoid - onehot(label).
template <typename Dtype>
Dtype MultiBoxLossLayer<Dtype>::ConfidenceLoss(const Dtype* scores, int label,
                                               Dtype* gradient) const {
  if (softmax_) {
    const Dtype top = *std::max_element(scores, scores + num_classes_);
    double sum = 0;
    for (int c = 0; c < num_classes_; ++c) sum += std::exp(double(scores[c] - top));
    if (gradient) {
      for (int c = 0; c < num_classes_; ++c) {
        gradient[c] = Dtype(std::exp(double(scores[c] - top)) / sum) - (c == label ? 1 : 0);
      }
    }
    return Dtype(std::log(sum) - double(scores[label] - top));
  }
  double loss = 0;
  for (int c = 0; c < num_classes_; ++c) {
    const double x = scores[c], target = c == label ? 1 : 0;
    loss += std::max(x, 0.0) - x * target + std::log1p(std::exp(-std::abs(x)));
    if (gradient) gradient[c] = Dtype(1 / (1 + std::exp(-x)) - target);
  }
  return Dtype(loss);
}

template <typename Dtype>
double MultiBoxLossLayer<Dtype>::PriorLocalisationLoss(const Blob<Dtype>& loc,
                                                       const std::vector<ssd::DetectionBox>& priors,
                                                       const Dtype* variances, int n, int p,
                                                       const ssd::GroundTruth& truth,
                                                       Dtype* gradient) const {
  const float v[4] = {float(variances[4 * p]), float(variances[4 * p + 1]),
                      float(variances[4 * p + 2]), float(variances[4 * p + 3])};
  const ssd::DetectionBox target =
      ssd::EncodeBox(priors[p], v, truth.box, code_type_, encode_variance_in_target_);
  const float targets[4] = {target.xmin, target.ymin, target.xmax, target.ymax};
  const int loc_class = share_location_ ? 0 : truth.label;
  const size_t at = static_cast<size_t>(n) * loc.count(1) +
                    (static_cast<size_t>(p) * num_loc_classes_ + loc_class) * 4;
  double loss = 0;
  for (int k = 0; k < 4; ++k) {
    const double d = double(loc.cpu_data()[at + k]) - targets[k];
    const bool linear = smooth_l1_ && std::abs(d) >= 1;
    loss += linear ? std::abs(d) - 0.5 : 0.5 * d * d;
    if (gradient) gradient[at + k] = Dtype(linear ? (d > 0 ? 1 : -1) : d);
  }
  return loss;
}

template <typename Dtype>
double MultiBoxLossLayer<Dtype>::LocalisationLoss(const Blob<Dtype>& loc,
                                                  const std::vector<ssd::DetectionBox>& priors,
                                                  const Dtype* variances, int n,
                                                  const std::vector<ssd::GroundTruth>& truths,
                                                  Dtype* gradient) const {
  double loss = 0;
  for (int p = 0; p < num_priors_; ++p) {
    const int t = matches_[n].truth[p];
    if (t >= 0) loss += PriorLocalisationLoss(loc, priors, variances, n, p, truths[t], gradient);
  }
  return loss;
}

template <typename Dtype>
std::vector<float> MultiBoxLossLayer<Dtype>::MiningLoss(
    const Blob<Dtype>& loc, const Blob<Dtype>& conf, const std::vector<ssd::DetectionBox>& priors,
    const Dtype* variances, int n) const {
  std::vector<float> loss(num_priors_);
  for (int p = 0; p < num_priors_; ++p) {
    const int t = matches_[n].truth[p];
    const int label = t >= 0 ? truths_[n][t].label : background_label_;
    const Dtype* scores =
        conf.cpu_data() + (static_cast<size_t>(n) * num_priors_ + p) * num_classes_;
    double value = ConfidenceLoss(scores, label, nullptr);
    if (t >= 0)
      value += PriorLocalisationLoss(loc, priors, variances, n, p, truths_[n][t], nullptr);
    loss[p] = static_cast<float>(value);
  }
  return loss;
}

template <typename Dtype>
std::vector<std::pair<int, int>> MultiBoxLossLayer<Dtype>::ConfidenceTargets(int n) const {
  std::vector<std::pair<int, int>> targets;  // (prior, label)
  for (int p = 0; p < num_priors_; ++p) {
    const int t = matches_[n].truth[p];
    if (t >= 0) {
      targets.emplace_back(p, truths_[n][t].label);
    } else if (mining_ == MultiBoxLossParameter::NONE) {
      targets.emplace_back(p, background_label_);
    }
  }
  for (int p : negatives_[n]) targets.emplace_back(p, background_label_);
  return targets;
}

template <typename Dtype>
Dtype MultiBoxLossLayer<Dtype>::LossNormalizer() const {
  const int num = static_cast<int>(truths_.size());
  return this->Normalizer(normalization_, num, num_priors_, num_matches_);
}

template <typename Dtype>
void MultiBoxLossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& loc = *bottom[0];
  const Blob<Dtype>& conf = *bottom[1];
  const Blob<Dtype>& prior = *bottom[2];
  const int num = loc.shape(0);
  const std::vector<float> rows(bottom[3]->cpu_data(), bottom[3]->cpu_data() + bottom[3]->count());
  truths_ = ssd::ReadGroundTruths(rows.data(), bottom[3]->count() / 8, num, use_difficult_gt_,
                                  background_label_,
                                  "layer '" + this->layer_param_.name() + "' (MultiBoxLoss)");
  if (map_object_to_agnostic_) {
    for (auto& image : truths_) {
      for (auto& truth : image) truth.label = background_label_ == 0 ? 1 : 0;
    }
  }
  for (const auto& image : truths_) {
    for (const auto& truth : image) {
      CREMA_LAYER_REQUIRE(truth.label < num_classes_, "a ground truth has label "
                                                          << truth.label << "; the layer has "
                                                          << num_classes_ << " classes");
    }
  }
  const std::vector<ssd::DetectionBox> priors = Priors(prior);
  const Dtype* variances = prior.cpu_data() + prior.count(2);
  std::vector<bool> ignored(num_priors_, false);
  for (int p = 0; p < num_priors_ && ignore_cross_boundary_; ++p) {
    const ssd::DetectionBox& b = priors[p];
    ignored[p] = b.xmin < 0 || b.ymin < 0 || b.xmax > 1 || b.ymax > 1;
  }
  matches_.assign(num, {});
  negatives_.assign(num, {});
  num_matches_ = 0;
  for (int n = 0; n < num; ++n) {
    const std::vector<ssd::DetectionBox> boxes =
        use_prior_for_matching_ ? priors : PredictedBoxes(loc, prior, n);
    matches_[n] = ssd::MatchPriors(boxes, truths_[n], per_prediction_, overlap_threshold_, ignored);
    if (mining_ == MultiBoxLossParameter::HARD_EXAMPLE) {
      const std::vector<ssd::DetectionBox> predicted =
          mining_nms_threshold_ > 0 ? PredictedBoxes(loc, prior, n) : boxes;
      negatives_[n] =
          ssd::MineHardExamples(&matches_[n], MiningLoss(loc, conf, priors, variances, n),
                                predicted, mining_nms_threshold_, sample_size_);
    }
    num_matches_ += matches_[n].matched();
    if (mining_ != MultiBoxLossParameter::MAX_NEGATIVE) continue;
    std::vector<float> background_loss(num_priors_);
    for (int p = 0; p < num_priors_; ++p) {
      const Dtype* scores =
          conf.cpu_data() + (static_cast<size_t>(n) * num_priors_ + p) * num_classes_;
      background_loss[p] = float(ConfidenceLoss(scores, background_label_, nullptr));
    }
    negatives_[n] = ssd::MineNegatives(matches_[n], background_loss, neg_pos_ratio_, neg_overlap_);
  }
  Dtype* loc_gradient = loc_gradient_.mutable_cpu_data();
  Dtype* conf_gradient = conf_gradient_.mutable_cpu_data();
  cpu_set(loc_gradient_.count(), Dtype(0), loc_gradient);
  cpu_set(conf_gradient_.count(), Dtype(0), conf_gradient);
  double loc_loss = 0, conf_loss = 0;
  for (int n = 0; n < num; ++n) {
    loc_loss += LocalisationLoss(loc, priors, variances, n, truths_[n], loc_gradient);
    for (const auto& [p, label] : ConfidenceTargets(n)) {
      const size_t at = (static_cast<size_t>(n) * num_priors_ + p) * num_classes_;
      conf_loss += ConfidenceLoss(conf.cpu_data() + at, label, conf_gradient + at);
    }
  }
  const Dtype normalizer = LossNormalizer();
  top[0]->mutable_cpu_data()[0] = Dtype((loc_weight_ * loc_loss + conf_loss) / normalizer);
  cpu_scal(loc_gradient_.count(), Dtype(loc_weight_ / normalizer), loc_gradient);
  cpu_scal(conf_gradient_.count(), Dtype(1 / normalizer), conf_gradient);
}

template <typename Dtype>
void MultiBoxLossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  CREMA_LAYER_REQUIRE(!propagate_down[2] && !propagate_down[3],
                      "cannot backpropagate to the priors or the ground truth; give the "
                      "layer propagate_down: true true false false, as SSD's training nets do");
  const Dtype scale = top[0]->cpu_diff()[0];
  if (propagate_down[0]) {
    cpu_scale(bottom[0]->count(), scale, loc_gradient_.cpu_data(), bottom[0]->mutable_cpu_diff());
  }
  if (propagate_down[1]) {
    cpu_scale(bottom[1]->count(), scale, conf_gradient_.cpu_data(), bottom[1]->mutable_cpu_diff());
  }
}

INSTANTIATE_CLASS(MultiBoxLossLayer);
REGISTER_LAYER_CLASS(MultiBoxLoss);

}  // namespace crema
