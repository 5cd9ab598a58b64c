// Exp: y = base^(shift + scale * x), with base e when base is -1.
#ifndef CREMA_LAYERS_EXP_LAYER_HPP_
#define CREMA_LAYERS_EXP_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class ExpLayer : public NeuronLayer<Dtype> {
 public:
  explicit ExpLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Exp"; }

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
  // y = outer_scale_ * e^(inner_scale_ * x).
  Dtype inner_scale_ = 1;
  Dtype outer_scale_ = 1;
};

}  // namespace crema

#endif  // CREMA_LAYERS_EXP_LAYER_HPP_
