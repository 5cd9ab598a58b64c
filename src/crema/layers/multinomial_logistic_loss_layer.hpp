// MultinomialLogisticLoss: loss = -sum_n log(max(p_n[label_n], 1e-20)) / N for
// probabilities p (bottom 0, N items of K values, e.g. a Softmax output) and
// one class label per item (bottom 1). SoftmaxWithLoss is the stabler choice
// after a softmax; this layer is for inputs that already are probabilities.
#ifndef CREMA_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_
#define CREMA_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_

#include <vector>

#include "crema/layers/loss_layer.hpp"

namespace crema {

template <typename Dtype>
class MultinomialLogisticLossLayer : public LossLayer<Dtype> {
 public:
  explicit MultinomialLogisticLossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "MultinomialLogisticLoss"; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_
