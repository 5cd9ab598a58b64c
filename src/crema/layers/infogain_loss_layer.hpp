// InfogainLoss: a multinomial logistic loss that weighs every (true class,
// predicted class) pair by an "information gain" matrix H (K x K):
//   loss = -sum_positions sum_k H[label, k] log(max(p_k, 1e-20)) / normalizer
// with p the softmax of bottom 0 over infogain_loss_param.axis and one label
// per position in bottom 1. H comes from a third bottom or, without one, from
// the BlobProto file infogain_loss_param.source. H = I gives SoftmaxWithLoss.
// ignore_label and normalization work as in SoftmaxWithLoss; an optional
// second top holds the probabilities.
#ifndef CREMA_LAYERS_INFOGAIN_LOSS_LAYER_HPP_
#define CREMA_LAYERS_INFOGAIN_LOSS_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/loss_layer.hpp"
#include "crema/layers/softmax_layer.hpp"

namespace crema {

template <typename Dtype>
class InfogainLossLayer : public LossLayer<Dtype> {
 public:
  explicit InfogainLossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "InfogainLoss"; }
  int ExactNumBottomBlobs() const override { return -1; }
  int MinBottomBlobs() const override { return 2; }
  int MaxBottomBlobs() const override { return 3; }
  int ExactNumTopBlobs() const override { return -1; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  // Neither the labels nor H have a gradient.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index == 0; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  const Blob<Dtype>& Infogain(const std::vector<Blob<Dtype>*>& bottom) const {
    return bottom.size() >= 3 ? *bottom[2] : infogain_;
  }

  std::unique_ptr<SoftmaxLayer<Dtype>> softmax_layer_;
  Blob<Dtype> prob_;
  std::vector<Blob<Dtype>*> softmax_bottom_vec_;
  std::vector<Blob<Dtype>*> softmax_top_vec_;
  // H as read from infogain_loss_param.source (unused with a third bottom).
  Blob<Dtype> infogain_;
  // sum_k H[j, k] for every row j: the weight of p in the gradient.
  Blob<Dtype> row_sums_;
  bool has_ignore_label_ = false;
  int ignore_label_ = 0;
  LossParameter::NormalizationMode normalization_ = LossParameter::VALID;
  int outer_num_ = 0;
  int num_classes_ = 0;
  int inner_num_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_INFOGAIN_LOSS_LAYER_HPP_
