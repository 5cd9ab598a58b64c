#include "crema/layers/loss_layer.hpp"

#include <algorithm>
#include <cmath>

namespace crema {

template <typename Dtype>
void LossLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  // Extra tops (e.g. the probabilities of SoftmaxWithLoss) are outputs, not
  // losses: weight 0 keeps SetLossWeights' one-weight-per-top rule satisfied.
  if (this->layer_param_.loss_weight_size() == 0) {
    this->layer_param_.add_loss_weight(1);
    for (size_t i = 1; i < top.size(); ++i) this->layer_param_.add_loss_weight(0);
  }
  const float smoothing = this->layer_param_.loss_param().label_smoothing();
  CREMA_LAYER_REQUIRE(smoothing == 0 || ReadsLabelSmoothing(),
                      "loss_param.label_smoothing is read by SoftmaxWithLoss only; this layer "
                      "would ignore it");
  CREMA_LAYER_REQUIRE(
      !this->layer_param_.loss_param().weight_by_label_freqs() || ReadsClassWeights(),
      "loss_param.weight_by_label_freqs (SegNet's class weights) is read by "
      "SoftmaxWithLoss only; this layer would ignore it");
  const LossParameter& loss_param = this->layer_param_.loss_param();
  const float pre_fixed = loss_param.pre_fixed_normalizer();
  CREMA_LAYER_REQUIRE(
      !(loss_param.has_normalization() && loss_param.normalization() == LossParameter::PRE_FIXED) ||
          (std::isfinite(pre_fixed) && pre_fixed > 0),
      "loss_param.pre_fixed_normalizer is " << pre_fixed
                                            << "; normalization PRE_FIXED divides by it, so it "
                                               "must be a positive number");
}

template <typename Dtype>
void LossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                               const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& prediction = *bottom[0];
  const Blob<Dtype>& target = *bottom[1];
  CREMA_LAYER_REQUIRE(prediction.num_axes() >= 1 && target.num_axes() >= 1 &&
                          prediction.shape(0) == target.shape(0),
                      "the prediction (bottom 0, shape " << prediction.shape_string()
                                                         << ") and the target (bottom 1, shape "
                                                         << target.shape_string()
                                                         << ") must hold the same number of "
                                                            "items along axis 0");
  top[0]->Reshape(std::vector<int>());
}

template <typename Dtype>
LossParameter::NormalizationMode LossLayer<Dtype>::NormalizationOf(
    const LossParameter& param, LossParameter::NormalizationMode unset_default) {
  if (param.has_normalization()) return param.normalization();
  if (param.has_normalize())
    return param.normalize() ? LossParameter::VALID : LossParameter::BATCH_SIZE;
  return unset_default;
}

template <typename Dtype>
Dtype LossLayer<Dtype>::Normalizer(LossParameter::NormalizationMode mode, int outer_num,
                                   int inner_num, int valid_count) const {
  double normalizer = 1;
  switch (mode) {
    case LossParameter::FULL:
      normalizer = double(outer_num) * inner_num;
      break;
    case LossParameter::VALID:
      normalizer = valid_count < 0 ? double(outer_num) * inner_num : double(valid_count);
      break;
    case LossParameter::BATCH_SIZE:
      normalizer = outer_num;
      break;
    case LossParameter::NONE:
      normalizer = 1;
      break;
    case LossParameter::PRE_FIXED:
      normalizer = this->layer_param_.loss_param().pre_fixed_normalizer();
      break;
  }
  return static_cast<Dtype>(std::max(1.0, normalizer));
}

template <typename Dtype>
int LossLayer<Dtype>::ClassLabel(Dtype value, int num_classes, int position) const {
  // Compared before the cast: a NaN or huge value has no int to cast to, and
  // 1.5 would pass as class 1.
  CREMA_LAYER_REQUIRE(value >= 0 && value < num_classes && std::floor(value) == value,
                      "label " << value << " at position " << position
                               << " of the label blob is not a class index (a whole number in "
                               << "[0, " << num_classes << "))");
  return static_cast<int>(value);
}

template <typename Dtype>
void LossLayer<Dtype>::ThrowForFirstBadLabel(const Blob<Dtype>& labels, int num_classes,
                                             bool has_ignore_label, int ignore_label) const {
  const Dtype* label_data = labels.cpu_data();
  for (int i = 0; i < labels.count(); ++i) {
    if (IsIgnoredLabel(label_data[i], has_ignore_label, ignore_label)) continue;
    ClassLabel(label_data[i], num_classes, i);
  }
  // Invariant: the device check and ClassLabel agree, so one label failed above.
  LOG(FATAL) << "labels were reported out of range but all are in range";
}

template <typename Dtype>
void LossLayer<Dtype>::RequireOutputTop(int top_index, const char* what) const {
  const LayerParameter& param = this->layer_param_;
  if (param.loss_weight_size() <= top_index) return;
  CREMA_LAYER_REQUIRE(param.loss_weight(top_index) == 0,
                      "top " << top_index << " holds " << what
                             << ", an output with no gradient; its loss_weight must be 0, not "
                             << param.loss_weight(top_index));
}

template <typename Dtype>
void LossLayer<Dtype>::RequireNoGradient(const std::vector<bool>& propagate_down, int bottom_index,
                                         const char* what) const {
  CREMA_LAYER_REQUIRE(
      static_cast<int>(propagate_down.size()) <= bottom_index || !propagate_down[bottom_index],
      "cannot backpropagate to " << what << " (bottom " << bottom_index
                                 << "); set propagate_down: false for it");
}

INSTANTIATE_CLASS(LossLayer);

}  // namespace crema
