// SigmoidCrossEntropyLoss: the cross-entropy between targets t in [0, 1]
// (bottom 1, same count as bottom 0) and p = sigmoid(x) of the scores x,
// loss = -sum [t log p + (1 - t) log(1 - p)] / normalizer, computed from x
// directly so large |x| cannot overflow. Elements whose target equals
// loss_param.ignore_label are skipped. As in Caffe, the normalization is
// BATCH_SIZE when the prototxt sets neither `normalization` nor `normalize`.
#ifndef CREMA_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_
#define CREMA_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_

#include <vector>

#include "crema/layers/loss_layer.hpp"

namespace crema {

template <typename Dtype>
class SigmoidCrossEntropyLossLayer : public LossLayer<Dtype> {
 public:
  explicit SigmoidCrossEntropyLossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "SigmoidCrossEntropyLoss"; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  bool has_ignore_label_ = false;
  int ignore_label_ = 0;
  LossParameter::NormalizationMode normalization_ = LossParameter::BATCH_SIZE;
  // A target outside [0, 1] (not ignored) is a user error naming it.
  void RequireProbability(Dtype target, int position) const;
  void ThrowForFirstBadTarget(const Blob<Dtype>& targets) const;

  // Items (axis 0) and elements per item.
  int outer_num_ = 0;
  int inner_num_ = 0;
  // The divisor forward used, reused by backward.
  Dtype normalizer_ = 1;
  Blob<Dtype> sigmoid_output_;
  // GPU scratch, one value per element: its loss, and whether it counts.
  Blob<Dtype> element_loss_;
  Blob<Dtype> element_valid_;
  Blob<Dtype> element_bad_;  // GPU: 1 where a target is no probability
  Blob<Dtype> ones_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_
