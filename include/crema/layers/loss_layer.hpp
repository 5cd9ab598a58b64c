// LossLayer: the base of layers that score a prediction (bottom 0) against a
// target (bottom 1) and produce one scalar loss (top 0, shape []). A loss
// layer's top weighs 1 in the objective unless the prototxt says otherwise.
#ifndef CREMA_LAYERS_LOSS_LAYER_HPP_
#define CREMA_LAYERS_LOSS_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

// Probabilities are clamped to this before taking a log, so a confident wrong
// prediction gives a large, finite loss.
constexpr double kLogThreshold = 1e-20;

// Whether a label is the layer's ignore_label, compared as Caffe compares it
// (after a cast to int: 255.5 is 255). A NaN or a value outside int is no
// label to ignore (and casting it would be undefined): the class check
// that follows then names it.
template <typename Dtype>
inline bool IsIgnoredLabel(Dtype value, bool has_ignore_label, int ignore_label) {
  const double v = static_cast<double>(value);
  return has_ignore_label && v > -2147483649.0 && v < 2147483648.0 &&
         static_cast<int>(v) == ignore_label;
}

template <typename Dtype>
class LossLayer : public Layer<Dtype> {
 public:
  explicit LossLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  // Gives the first top loss weight 1 (and any further top 0) when the
  // prototxt names no loss_weight.
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  // Checks that prediction and target hold the same number of items and
  // shapes the loss top as a scalar.
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AutoTopBlobs() const override { return true; }
  // Targets have no gradient.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 1; }

 protected:
  // Whether this loss reads loss_param.label_smoothing (SoftmaxWithLoss);
  // elsewhere a non-zero value is refused rather than ignored.
  virtual bool ReadsLabelSmoothing() const { return false; }
  // Likewise SegNet's weight_by_label_freqs with class_weighting.
  virtual bool ReadsClassWeights() const { return false; }
  // The normalization `param` asks for. The legacy `normalize` flag (true:
  // VALID, false: BATCH_SIZE) applies when `normalization` is not set; with
  // neither set, the result is unset_default.
  static LossParameter::NormalizationMode NormalizationOf(
      const LossParameter& param, LossParameter::NormalizationMode unset_default);
  // What the summed loss is divided by: FULL outer*inner, VALID the number of
  // non-ignored positions (valid_count), BATCH_SIZE outer, NONE 1, R-FCN's
  // PRE_FIXED loss_param.pre_fixed_normalizer; never below 1, so an
  // all-ignored batch gives 0 rather than NaN.
  Dtype Normalizer(LossParameter::NormalizationMode mode, int outer_num, int inner_num,
                   int valid_count) const;

  // A target read as a class index; a value that is not a whole number in
  // [0, num_classes) is a user error naming the value and its position.
  int ClassLabel(Dtype value, int num_classes, int position) const;
  // Throws for the first label of `labels` that is neither a class index nor
  // (when has_ignore_label) the ignore label; used where labels were checked
  // in bulk (on the GPU) and one failed.
  void ThrowForFirstBadLabel(const Blob<Dtype>& labels, int num_classes, bool has_ignore_label,
                             int ignore_label) const;
  // Refuses a loss weight other than 0 on top `top_index`, an output that
  // has no gradient (`what` names it). A file with fewer weights than tops
  // is refused later, by the one-weight-per-top rule.
  void RequireOutputTop(int top_index, const char* what) const;
  // Refuses a request for the gradient of a bottom that has none.
  void RequireNoGradient(const std::vector<bool>& propagate_down, int bottom_index,
                         const char* what) const;
};

}  // namespace crema

#endif  // CREMA_LAYERS_LOSS_LAYER_HPP_
