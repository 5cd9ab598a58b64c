// EuclideanLoss: loss = sum((a - b)^2) / (2N) over two bottoms of the same
// size per item (N = items along axis 0). Both bottoms get a gradient, so it
// also serves to pull two learned representations together.
#ifndef CREMA_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_
#define CREMA_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_

#include <vector>

#include "crema/layers/loss_layer.hpp"

namespace crema {

template <typename Dtype>
class EuclideanLossLayer : public LossLayer<Dtype> {
 public:
  explicit EuclideanLossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "EuclideanLoss"; }
  // Unlike a label, bottom 1 is differentiable.
  bool AllowForceBackward(int bottom_index) const override { return true; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  // a - b, kept from forward for backward.
  Blob<Dtype> difference_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_
