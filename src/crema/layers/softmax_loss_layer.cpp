#include "crema/layers/softmax_loss_layer.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace crema {

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::LayerSetUp(bottom, top);
  LayerParameter softmax_param(this->layer_param_);
  softmax_param.set_type("Softmax");
  softmax_param.clear_loss_weight();
  softmax_layer_.reset(new SoftmaxLayer<Dtype>(softmax_param));
  softmax_bottom_vec_ = {bottom[0]};
  softmax_top_vec_ = {&prob_};
  softmax_layer_->SetUp(softmax_bottom_vec_, softmax_top_vec_);

  const LossParameter& loss_param = this->layer_param_.loss_param();
  has_ignore_label_ = loss_param.has_ignore_label();
  ignore_label_ = loss_param.ignore_label();
  normalization_ = this->NormalizationOf(loss_param, LossParameter::VALID);
  const float smoothing = loss_param.label_smoothing();
  CREMA_LAYER_REQUIRE(
      std::isfinite(smoothing) && smoothing >= 0 && smoothing < 1,
      "loss_param.label_smoothing is " << smoothing << "; it must lie in [0, 1) (0: none)");
  smoothing_ = smoothing;
  ReadClassWeights(loss_param);
  if (top.size() > 2) this->RequireOutputTop(2, "each position's loss");
}

// SegNet: the weights apply only with weight_by_label_freqs, as in its code.
template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::ReadClassWeights(const LossParameter& param) {
  if (!param.weight_by_label_freqs()) {
    LOG_IF(WARNING, param.class_weighting_size() > 0)
        << "layer '" << this->layer_param_.name()
        << "' (SoftmaxWithLoss): class_weighting without weight_by_label_freqs: true is "
           "ignored, as in SegNet";
    return;
  }
  CREMA_LAYER_REQUIRE(param.class_weighting_size() > 0,
                      "weight_by_label_freqs needs class_weighting, one weight per class");
  CREMA_LAYER_REQUIRE(smoothing_ == 0,
                      "label_smoothing with SegNet's class weights is not "
                      "defined; give one of them");
  for (float weight : param.class_weighting()) {
    CREMA_LAYER_REQUIRE(std::isfinite(weight) && weight >= 0, "class_weighting holds "
                                                                  << weight
                                                                  << "; weights must be finite and "
                                                                     "not negative");
    class_weights_.push_back(static_cast<Dtype>(weight));
  }
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  softmax_bottom_vec_[0] = bottom[0];
  softmax_layer_->Reshape(softmax_bottom_vec_, softmax_top_vec_);
  const int axis = bottom[0]->CanonicalAxisIndex(this->layer_param_.softmax_param().axis());
  outer_num_ = bottom[0]->count(0, axis);
  num_classes_ = bottom[0]->shape(axis);
  inner_num_ = bottom[0]->count(axis + 1);
  CREMA_LAYER_REQUIRE(!weighted() || static_cast<int>(class_weights_.size()) == num_classes_,
                      "class_weighting holds " << class_weights_.size() << " weights for "
                                               << num_classes_ << " classes");
  CREMA_LAYER_REQUIRE(outer_num_ * inner_num_ == bottom[1]->count(),
                      "needs one label per prediction: the prediction (bottom 0, shape "
                          << bottom[0]->shape_string() << ") has " << outer_num_ * inner_num_
                          << " positions around softmax axis " << axis
                          << ", the label (bottom 1, shape " << bottom[1]->shape_string()
                          << ") has " << bottom[1]->count() << " values");
  if (top.size() >= 2) top[1]->ReshapeLike(*bottom[0]);
  if (top.size() >= 3) top[2]->ReshapeLike(*bottom[1]);
  const std::vector<int> positions{outer_num_ * inner_num_};
  position_loss_.Reshape(positions);
  position_valid_.Reshape(positions);
  position_bad_label_.Reshape(positions);
}

// The sum over the classes of -log p at one position (first: its class 0;
// the classes lie inner_num_ apart), each p floored at FLT_MIN as the
// label's is.
template <typename Dtype>
Dtype SoftmaxWithLossLayer<Dtype>::ClassesLoss(const Dtype* first) const {
  Dtype sum = 0;
  for (int c = 0; c < num_classes_; ++c) {
    sum -= std::log(std::max(first[c * inner_num_], Dtype(FLT_MIN)));
  }
  return sum;
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  softmax_layer_->Forward(softmax_bottom_vec_, softmax_top_vec_);
  const Dtype* prob = prob_.cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const int slice = num_classes_ * inner_num_;
  Dtype* position_loss = top.size() >= 3 ? top[2]->mutable_cpu_data() : nullptr;
  Dtype loss = 0;
  int valid_count = 0;
  for (int i = 0; i < outer_num_; ++i) {
    for (int j = 0; j < inner_num_; ++j) {
      const int position = i * inner_num_ + j;
      if (position_loss) position_loss[position] = 0;
      if (IsIgnoredLabel(label[position], has_ignore_label_, ignore_label_)) continue;
      const int label_value = this->ClassLabel(label[position], num_classes_, position);
      const Dtype* first = prob + i * slice + j;
      const Dtype log_p = std::log(std::max(first[label_value * inner_num_], Dtype(FLT_MIN)));
      Dtype term = -log_p;
      if (weighted()) {
        term = class_weights_[label_value] * -log_p;
      } else if (smoothing_ != 0) {
        term = (1 - smoothing_) * -log_p + smoothing_ / num_classes_ * ClassesLoss(first);
      }
      loss += term;
      if (position_loss) position_loss[position] = term;
      ++valid_count;
    }
  }
  top[0]->mutable_cpu_data()[0] =
      loss / this->Normalizer(normalization_, outer_num_, inner_num_, valid_count);
  if (top.size() >= 2) top[1]->ShareData(prob_);
}

// d loss / d x = p - q, q the target (onehot(label), smoothed), zero at
// ignored positions.
template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  this->RequireNoGradient(propagate_down, 1, "the labels");
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_copy(prob_.count(), prob_.cpu_data(), bottom_diff);
  const Dtype* label = bottom[1]->cpu_data();
  const int slice = num_classes_ * inner_num_;
  int valid_count = 0;
  for (int i = 0; i < outer_num_; ++i) {
    for (int j = 0; j < inner_num_; ++j) {
      const int position = i * inner_num_ + j;
      const int label_value = static_cast<int>(label[position]);
      if (has_ignore_label_ && label_value == ignore_label_) {
        for (int c = 0; c < num_classes_; ++c) bottom_diff[i * slice + c * inner_num_ + j] = 0;
        continue;
      }
      Dtype* first = bottom_diff + i * slice + j;
      first[label_value * inner_num_] -= 1 - smoothing_;
      if (smoothing_ != 0) {
        for (int c = 0; c < num_classes_; ++c) first[c * inner_num_] -= smoothing_ / num_classes_;
      }
      if (weighted()) {
        for (int c = 0; c < num_classes_; ++c) first[c * inner_num_] *= class_weights_[label_value];
      }
      ++valid_count;
    }
  }
  const Dtype scale =
      top[0]->cpu_diff()[0] / this->Normalizer(normalization_, outer_num_, inner_num_, valid_count);
  cpu_scal(prob_.count(), scale, bottom_diff);
}

#ifndef CREMA_CUDA
STUB_GPU(SoftmaxWithLossLayer);
#endif

INSTANTIATE_CLASS(SoftmaxWithLossLayer);
REGISTER_LAYER_CLASS(SoftmaxWithLoss);
INSTANTIATE_CLASS(SoftmaxWithLossOHEMLayer);
REGISTER_LAYER_CLASS(SoftmaxWithLossOHEM);

}  // namespace crema
