#include "crema/layers/infogain_loss_layer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "crema/util/io.hpp"

namespace crema {

template <typename Dtype>
void InfogainLossLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::LayerSetUp(bottom, top);
  LayerParameter softmax_param(this->layer_param_);
  softmax_param.set_type("Softmax");
  softmax_param.clear_loss_weight();
  softmax_param.mutable_softmax_param()->set_axis(this->layer_param_.infogain_loss_param().axis());
  softmax_layer_.reset(new SoftmaxLayer<Dtype>(softmax_param));
  softmax_bottom_vec_ = {bottom[0]};
  softmax_top_vec_ = {&prob_};
  softmax_layer_->SetUp(softmax_bottom_vec_, softmax_top_vec_);

  const LossParameter& loss_param = this->layer_param_.loss_param();
  has_ignore_label_ = loss_param.has_ignore_label();
  ignore_label_ = loss_param.ignore_label();
  normalization_ = this->NormalizationOf(loss_param, LossParameter::VALID);

  if (bottom.size() >= 3) return;
  const std::string& source = this->layer_param_.infogain_loss_param().source();
  CREMA_LAYER_REQUIRE(!source.empty(),
                      "needs the infogain matrix H: give infogain_loss_param { source: "
                      "\"H.binaryproto\" } or a third bottom");
  BlobProto infogain_proto;
  try {
    ReadProtoFromBinaryFile(source, &infogain_proto);
  } catch (const Error& e) {
    CREMA_LAYER_REQUIRE(false, "cannot read the infogain matrix: " << e.what());
  }
  try {
    infogain_.FromProto(infogain_proto);
  } catch (const Error& e) {
    CREMA_LAYER_REQUIRE(false, "the infogain matrix " << source << ": " << e.what());
  }
}

template <typename Dtype>
void InfogainLossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  softmax_bottom_vec_[0] = bottom[0];
  softmax_layer_->Reshape(softmax_bottom_vec_, softmax_top_vec_);
  const int axis = bottom[0]->CanonicalAxisIndex(this->layer_param_.infogain_loss_param().axis());
  outer_num_ = bottom[0]->count(0, axis);
  num_classes_ = bottom[0]->shape(axis);
  inner_num_ = bottom[0]->count(axis + 1);
  CREMA_LAYER_REQUIRE(outer_num_ * inner_num_ == bottom[1]->count(),
                      "needs one label per prediction: the prediction (bottom 0, shape "
                          << bottom[0]->shape_string() << ") has " << outer_num_ * inner_num_
                          << " positions around axis " << axis << ", the label (bottom 1, shape "
                          << bottom[1]->shape_string() << ") has " << bottom[1]->count()
                          << " values");
  const Blob<Dtype>& infogain = Infogain(bottom);
  CREMA_LAYER_REQUIRE(infogain.count() == num_classes_ * num_classes_,
                      "the infogain matrix H must be "
                          << num_classes_ << " x " << num_classes_ << " for " << num_classes_
                          << " classes, got shape " << infogain.shape_string());
  row_sums_.Reshape(std::vector<int>{num_classes_});
  if (top.size() >= 2) top[1]->ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void InfogainLossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  softmax_layer_->Forward(softmax_bottom_vec_, softmax_top_vec_);
  const Dtype* prob = prob_.cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const Dtype* infogain = Infogain(bottom).cpu_data();
  const int slice = num_classes_ * inner_num_;
  Dtype loss = 0;
  int valid_count = 0;
  for (int i = 0; i < outer_num_; ++i) {
    for (int j = 0; j < inner_num_; ++j) {
      const int position = i * inner_num_ + j;
      if (IsIgnoredLabel(label[position], has_ignore_label_, ignore_label_)) continue;
      const int label_value = this->ClassLabel(label[position], num_classes_, position);
      const Dtype* infogain_row = infogain + label_value * num_classes_;
      for (int k = 0; k < num_classes_; ++k) {
        const Dtype p = prob[i * slice + k * inner_num_ + j];
        loss -= infogain_row[k] * std::log(std::max(p, Dtype(kLogThreshold)));
      }
      ++valid_count;
    }
  }
  top[0]->mutable_cpu_data()[0] =
      loss / this->Normalizer(normalization_, outer_num_, inner_num_, valid_count);
  if (top.size() >= 2) top[1]->ShareData(prob_);
}

// With h = H[label], d loss / d x_k = p_k sum_j h_j - h_k (softmax folded in).
template <typename Dtype>
void InfogainLossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  this->RequireNoGradient(propagate_down, 1, "the labels");
  this->RequireNoGradient(propagate_down, 2, "the infogain matrix");
  if (!propagate_down[0]) return;
  const Dtype* prob = prob_.cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const Dtype* infogain = Infogain(bottom).cpu_data();
  Dtype* row_sums = row_sums_.mutable_cpu_data();
  for (int row = 0; row < num_classes_; ++row) {
    row_sums[row] = 0;
    for (int k = 0; k < num_classes_; ++k) row_sums[row] += infogain[row * num_classes_ + k];
  }
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int slice = num_classes_ * inner_num_;
  int valid_count = 0;
  for (int i = 0; i < outer_num_; ++i) {
    for (int j = 0; j < inner_num_; ++j) {
      const int label_value = static_cast<int>(label[i * inner_num_ + j]);
      const bool ignored = has_ignore_label_ && label_value == ignore_label_;
      for (int k = 0; k < num_classes_; ++k) {
        const int index = i * slice + k * inner_num_ + j;
        bottom_diff[index] = ignored ? Dtype(0)
                                     : prob[index] * row_sums[label_value] -
                                           infogain[label_value * num_classes_ + k];
      }
      if (!ignored) ++valid_count;
    }
  }
  const Dtype scale =
      top[0]->cpu_diff()[0] / this->Normalizer(normalization_, outer_num_, inner_num_, valid_count);
  cpu_scal(bottom[0]->count(), scale, bottom_diff);
}

INSTANTIATE_CLASS(InfogainLossLayer);
REGISTER_LAYER_CLASS(InfogainLoss);

}  // namespace crema
