// MultiBoxLoss (SSD, weiliu89/caffe): the training loss of an SSD head.
// Bottoms: loc [N, num_priors * num_loc_classes * 4] (box offsets), conf
// [N, num_priors * num_classes] (scores before softmax), prior [1, 2,
// num_priors * 4] (PriorBox's corners, then variances), and the ground
// truth [1, 1, G, 8] (rows: image, label, instance, xmin, ymin, xmax, ymax,
// difficult, as AnnotatedData gives them; image -1 is padding).
//
// Per image, priors are matched to ground truths (ssd::MatchPriors: bipartite,
// then PER_PREDICTION above overlap_threshold); with mining (MAX_NEGATIVE),
// unmatched priors of the largest background loss join as negatives, up to
// neg_pos_ratio per match (ssd::MineNegatives); without (NONE), every prior
// does. The loss is
//   (loc_weight * sum over matches of SmoothL1 (or L2 / 2) of (loc - target)
//    + sum over matches and negatives of the confidence loss) / normalizer,
// the target being the matched box encoded from its prior (code_type,
// encode_variance_in_target), the confidence loss softmax cross-entropy (or
// logistic over every class), and the normalizer by loss_param.normalization
// (VALID, the default: the number of matches; FULL: N * num_priors;
// BATCH_SIZE: N; NONE: 1; never below 1). Gradients go to loc and conf.
// Matching and mining run on the host, as in the fork; so do the losses.
// HARD_EXAMPLE mining, bp_inside and matching by predictions without shared
// locations are refused by name.
#ifndef CREMA_LAYERS_MULTIBOX_LOSS_LAYER_HPP_
#define CREMA_LAYERS_MULTIBOX_LOSS_LAYER_HPP_

#include <vector>

#include "crema/detection/matching.hpp"
#include "crema/layers/loss_layer.hpp"

namespace crema {

template <typename Dtype>
class MultiBoxLossLayer : public LossLayer<Dtype> {
 public:
  explicit MultiBoxLossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "MultiBoxLoss"; }
  int ExactNumBottomBlobs() const override { return 4; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index < 2; }

  // What the last forward matched and mined, for tests and logs.
  int matches() const { return num_matches_; }
  const std::vector<std::vector<int>>& negatives() const { return negatives_; }
  const std::vector<ssd::PriorMatches>& prior_matches() const { return matches_; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  void ReadParameters();
  std::vector<ssd::DetectionBox> Priors(const Blob<Dtype>& prior) const;
  // The boxes image n's loc predictions decode to (shared locations).
  std::vector<ssd::DetectionBox> PredictedBoxes(const Blob<Dtype>& loc, const Blob<Dtype>& prior,
                                                int n) const;
  // The confidence loss of prior p of image n for class `label`, and its
  // gradient into `gradient` (num_classes values) when not null.
  Dtype ConfidenceLoss(const Dtype* scores, int label, Dtype* gradient) const;
  // The localisation loss of prior p of image n against ground truth t
  // (and its gradient into `gradient`, laid out as loc, when not null).
  double PriorLocalisationLoss(const Blob<Dtype>& loc, const std::vector<ssd::DetectionBox>& priors,
                               const Dtype* variances, int n, int p, const ssd::GroundTruth& truth,
                               Dtype* gradient) const;
  // HARD_EXAMPLE's ranking loss of every prior of image n: the confidence
  // loss against its target plus a matched prior's localisation loss.
  std::vector<float> MiningLoss(const Blob<Dtype>& loc, const Blob<Dtype>& conf,
                                const std::vector<ssd::DetectionBox>& priors,
                                const Dtype* variances, int n) const;
  // Sums the localisation loss of image n's matches (and its gradient).
  double LocalisationLoss(const Blob<Dtype>& loc, const std::vector<ssd::DetectionBox>& priors,
                          const Dtype* variances, int n,
                          const std::vector<ssd::GroundTruth>& truths, Dtype* gradient) const;
  // The priors of image n whose confidence counts, with their targets.
  std::vector<std::pair<int, int>> ConfidenceTargets(int n) const;
  Dtype LossNormalizer() const;

  int num_classes_ = 0;
  int num_loc_classes_ = 1;
  int num_priors_ = 0;
  int background_label_ = 0;
  bool share_location_ = true;
  bool per_prediction_ = true;
  bool use_prior_for_matching_ = true;
  bool use_difficult_gt_ = true;
  // NONE: every prior's confidence counts; MAX_NEGATIVE and HARD_EXAMPLE:
  // the matches' and the mined negatives'.
  MultiBoxLossParameter::MiningType mining_ = MultiBoxLossParameter::MAX_NEGATIVE;
  float mining_nms_threshold_ = 0;  // HARD_EXAMPLE: nms_param's, 0 for none
  int sample_size_ = 64;            // HARD_EXAMPLE
  bool smooth_l1_ = true;
  bool softmax_ = true;
  bool map_object_to_agnostic_ = false;
  bool ignore_cross_boundary_ = false;
  bool encode_variance_in_target_ = false;
  float loc_weight_ = 1;
  float overlap_threshold_ = 0.5f;
  float neg_pos_ratio_ = 3;
  float neg_overlap_ = 0.5f;
  PriorBoxParameter::CodeType code_type_ = PriorBoxParameter::CORNER;
  LossParameter::NormalizationMode normalization_ = LossParameter::VALID;

  // From the last forward: per image, the ground truths, the matches and the
  // mined negatives; the gradients (before the top's gradient) it computed.
  std::vector<std::vector<ssd::GroundTruth>> truths_;
  std::vector<ssd::PriorMatches> matches_;
  std::vector<std::vector<int>> negatives_;
  int num_matches_ = 0;
  Blob<Dtype> loc_gradient_, conf_gradient_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_MULTIBOX_LOSS_LAYER_HPP_
