// Power: y = (shift + scale * x)^power.
#ifndef CREMA_LAYERS_POWER_LAYER_HPP_
#define CREMA_LAYERS_POWER_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class PowerLayer : public NeuronLayer<Dtype> {
 public:
  explicit PowerLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Power"; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // Whether dy/dx depends on x (a non-constant derivative).
  bool DerivativeNeedsInput() const { return derivative_scale_ != 0 && power_ != 1; }

  Dtype power_ = 1;
  Dtype scale_ = 1;
  Dtype shift_ = 0;
  // power * scale: dy/dx = derivative_scale_ * (shift + scale * x)^(power - 1).
  Dtype derivative_scale_ = 1;
  // Backward needs x; in place, forward keeps a copy of it here.
  Blob<Dtype> bottom_copy_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_POWER_LAYER_HPP_
