// ELU: y = x for x > 0, alpha * (e^x - 1) otherwise (Clevert et al., 2015).
#ifndef CREMA_LAYERS_ELU_LAYER_HPP_
#define CREMA_LAYERS_ELU_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class ELULayer : public NeuronLayer<Dtype> {
 public:
  explicit ELULayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  const char* type() const override { return "ELU"; }

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

#endif  // CREMA_LAYERS_ELU_LAYER_HPP_
