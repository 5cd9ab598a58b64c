#include "crema/layers/accuracy_layer.hpp"

#include <algorithm>
#include <cmath>

#include "crema/layers/loss_layer.hpp"  // IsIgnoredLabel

namespace crema {

template <typename Dtype>
void AccuracyLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const AccuracyParameter& param = this->layer_param_.accuracy_param();
  top_k_ = static_cast<int>(param.top_k());
  has_ignore_label_ = param.has_ignore_label();
  ignore_label_ = param.ignore_label();
  CREMA_LAYER_REQUIRE(param.top_k() >= 1, "top_k must be at least 1, got " << param.top_k());
}

template <typename Dtype>
void AccuracyLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int axis = this->layer_param_.accuracy_param().axis();
  const int num_axes = bottom[0]->num_axes();
  CREMA_LAYER_REQUIRE(axis >= -num_axes && axis < num_axes,
                      "accuracy axis " << axis << " is out of range for scores of shape "
                                       << bottom[0]->shape_string());
  const int class_axis = bottom[0]->CanonicalAxisIndex(axis);
  outer_num_ = bottom[0]->count(0, class_axis);
  num_classes_ = bottom[0]->shape(class_axis);
  inner_num_ = bottom[0]->count(class_axis + 1);
  CREMA_LAYER_REQUIRE(
      static_cast<unsigned>(num_classes_) >= this->layer_param_.accuracy_param().top_k(),
      "top_k (" << this->layer_param_.accuracy_param().top_k()
                << ") must not exceed the number of classes (" << num_classes_ << ", axis "
                << class_axis << " of scores of shape " << bottom[0]->shape_string() << ")");
  CREMA_LAYER_REQUIRE(outer_num_ * inner_num_ == bottom[1]->count(),
                      "needs one label per prediction: the scores (bottom 0, shape "
                          << bottom[0]->shape_string() << ") have " << outer_num_ * inner_num_
                          << " positions around axis " << class_axis
                          << ", the labels (bottom 1, shape " << bottom[1]->shape_string()
                          << ") have " << bottom[1]->count() << " values");
  top[0]->Reshape(std::vector<int>());
  if (top.size() >= 2) top[1]->Reshape(std::vector<int>{num_classes_});
  class_totals_.assign(num_classes_, 0);
}

template <typename Dtype>
void AccuracyLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const Dtype* score = bottom[0]->cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const int slice = num_classes_ * inner_num_;
  Dtype* class_accuracy = top.size() >= 2 ? top[1]->mutable_cpu_data() : nullptr;
  if (class_accuracy) std::fill(class_accuracy, class_accuracy + num_classes_, Dtype(0));
  std::fill(class_totals_.begin(), class_totals_.end(), 0);
  int correct = 0;
  int total = 0;
  for (int i = 0; i < outer_num_; ++i) {
    for (int j = 0; j < inner_num_; ++j) {
      const int position = i * inner_num_ + j;
      const Dtype value = label[position];
      if (IsIgnoredLabel(value, has_ignore_label_, ignore_label_)) continue;
      // The value itself is compared: a NaN casts to no meaningful int, and
      // 1.5 would pass as class 1.
      CREMA_LAYER_REQUIRE(value >= 0 && value < num_classes_ && std::floor(value) == value,
                          "label " << value << " at position " << position
                                   << " of the label blob is not a class index (a whole number "
                                   << "in [0, " << num_classes_ << "))");
      const int label_value = static_cast<int>(value);
      ++total;
      ++class_totals_[label_value];
      // The true class is in the top k when fewer than k other classes score
      // at least as high as it.
      const Dtype true_score = score[i * slice + label_value * inner_num_ + j];
      int rivals = 0;
      for (int c = 0; c < num_classes_ && rivals < top_k_; ++c) {
        if (c != label_value && score[i * slice + c * inner_num_ + j] >= true_score) ++rivals;
      }
      if (rivals < top_k_) {
        ++correct;
        if (class_accuracy) ++class_accuracy[label_value];
      }
    }
  }
  top[0]->mutable_cpu_data()[0] = total == 0 ? Dtype(0) : Dtype(correct) / total;
  if (class_accuracy) {
    for (int c = 0; c < num_classes_; ++c) {
      if (class_totals_[c] > 0) class_accuracy[c] /= class_totals_[c];
    }
  }
}

template <typename Dtype>
void AccuracyLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  for (size_t i = 0; i < propagate_down.size(); ++i) {
    CREMA_LAYER_REQUIRE(!propagate_down[i], "has no gradient; cannot backpropagate to bottom "
                                                << i << " (set propagate_down: false)");
  }
}

INSTANTIATE_CLASS(AccuracyLayer);
REGISTER_LAYER_CLASS(Accuracy);

}  // namespace crema
