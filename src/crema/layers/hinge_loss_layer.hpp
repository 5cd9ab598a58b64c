// HingeLoss: the one-vs-all hinge loss of scores x (bottom 0, N items of K
// scores) against one class label per item (bottom 1):
//   L1: loss = sum_n sum_k max(0, 1 - t_nk x_nk) / N
//   L2: loss = sum_n sum_k max(0, 1 - t_nk x_nk)^2 / N
// with t_nk = +1 for the item's label and -1 for every other class.
#ifndef CREMA_LAYERS_HINGE_LOSS_LAYER_HPP_
#define CREMA_LAYERS_HINGE_LOSS_LAYER_HPP_

#include <vector>

#include "crema/layers/loss_layer.hpp"

namespace crema {

template <typename Dtype>
class HingeLossLayer : public LossLayer<Dtype> {
 public:
  explicit HingeLossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "HingeLoss"; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  // max(0, 1 - t x) per score, kept from forward for backward.
  Blob<Dtype> margins_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_HINGE_LOSS_LAYER_HPP_
