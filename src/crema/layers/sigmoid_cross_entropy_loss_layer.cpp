#include "crema/layers/sigmoid_cross_entropy_loss_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                                     const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::LayerSetUp(bottom, top);
  const LossParameter& loss_param = this->layer_param_.loss_param();
  has_ignore_label_ = loss_param.has_ignore_label();
  ignore_label_ = loss_param.ignore_label();
  // Caffe keeps dividing by the batch size here unless asked otherwise, for
  // compatibility with nets trained before it had a normalization setting.
  normalization_ = this->NormalizationOf(loss_param, LossParameter::BATCH_SIZE);
}

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                                  const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  CREMA_LAYER_REQUIRE(bottom[0]->count() == bottom[1]->count(),
                      "needs one target per score: the scores (bottom 0) have shape "
                          << bottom[0]->shape_string() << ", the targets (bottom 1) have shape "
                          << bottom[1]->shape_string());
  outer_num_ = bottom[0]->shape(0);
  inner_num_ = bottom[0]->count(1);
  sigmoid_output_.ReshapeLike(*bottom[0]);
  element_loss_.ReshapeLike(*bottom[0]);
  element_valid_.ReshapeLike(*bottom[0]);
  element_bad_.ReshapeLike(*bottom[0]);
  if (ones_.shape() != bottom[0]->shape()) {  // never shaped: count 0 too
    ones_.ReshapeLike(*bottom[0]);
    cpu_set(ones_.count(), Dtype(1), ones_.mutable_cpu_data());
  }
}

// Outside [0, 1] the sum is no cross-entropy (it can go negative).
template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::RequireProbability(Dtype target, int position) const {
  CREMA_LAYER_REQUIRE(target >= 0 && target <= 1,
                      "target " << target << " at position " << position
                                << " is not a probability in [0, 1]"
                                << (has_ignore_label_ ? "" : " (loss_param.ignore_label unset)"));
}

// The GPU body flags bad targets; the host finds the first to name it.
template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::ThrowForFirstBadTarget(const Blob<Dtype>& targets) const {
  const Dtype* target = targets.cpu_data();
  for (int i = 0; i < targets.count(); ++i) {
    if (IsIgnoredLabel(target[i], has_ignore_label_, ignore_label_)) continue;
    RequireProbability(target[i], i);
  }
}

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                      const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* score = bottom[0]->cpu_data();
  const Dtype* target = bottom[1]->cpu_data();
  Dtype* sigmoid = sigmoid_output_.mutable_cpu_data();
  Dtype loss = 0;
  int valid_count = 0;
  for (int i = 0; i < count; ++i) {
    const Dtype x = score[i];
    // exp(-|x|) never overflows; both formulas below are built on it.
    const Dtype e = std::exp(-std::fabs(x));
    sigmoid[i] = x >= 0 ? 1 / (1 + e) : e / (1 + e);
    if (IsIgnoredLabel(target[i], has_ignore_label_, ignore_label_)) continue;
    RequireProbability(target[i], i);
    loss += (x > 0 ? x : Dtype(0)) - x * target[i] + std::log1p(e);
    ++valid_count;
  }
  normalizer_ = this->Normalizer(normalization_, outer_num_, inner_num_, valid_count);
  top[0]->mutable_cpu_data()[0] = loss / normalizer_;
}

// d loss / d x = sigmoid(x) - t, zero where the target is ignored.
template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                       const std::vector<bool>& propagate_down,
                                                       const std::vector<Blob<Dtype>*>& bottom) {
  this->RequireNoGradient(propagate_down, 1, "the targets");
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype* target = bottom[1]->cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_sub(count, sigmoid_output_.cpu_data(), target, bottom_diff);
  if (has_ignore_label_) {
    for (int i = 0; i < count; ++i) {
      if (static_cast<int>(target[i]) == ignore_label_) bottom_diff[i] = 0;
    }
  }
  cpu_scal(count, top[0]->cpu_diff()[0] / normalizer_, bottom_diff);
}

#ifndef CREMA_CUDA
STUB_GPU(SigmoidCrossEntropyLossLayer);
#endif

INSTANTIATE_CLASS(SigmoidCrossEntropyLossLayer);
REGISTER_LAYER_CLASS(SigmoidCrossEntropyLoss);

}  // namespace crema
