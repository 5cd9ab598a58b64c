// TanH: y = tanh(x).
#ifndef CREMA_LAYERS_TANH_LAYER_HPP_
#define CREMA_LAYERS_TANH_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class TanHLayer : public NeuronLayer<Dtype> {
 public:
  explicit TanHLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  const char* type() const override { return "TanH"; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_LAYERS_TANH_LAYER_HPP_
