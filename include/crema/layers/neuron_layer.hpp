// NeuronLayer: the base of element-wise layers, one bottom and one top of the
// same shape (which may be the same blob: neurons compute in place).
#ifndef CREMA_LAYERS_NEURON_LAYER_HPP_
#define CREMA_LAYERS_NEURON_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class NeuronLayer : public Layer<Dtype> {
 public:
  explicit NeuronLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override {
    top[0]->ReshapeLike(*bottom[0]);
  }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
};

}  // namespace crema

#endif  // CREMA_LAYERS_NEURON_LAYER_HPP_
