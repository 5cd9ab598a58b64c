// Mish (Misra, 2019; the YOLOv4 Caffe forks' type "Mish", no parameters):
// y = x tanh(softplus(x)), softplus(x) = log(1 + e^x), taken as x above 20
// and as e^x below -20 (the forks' thresholds). Backward is the derivative
// at the input, tanh(sp) + x sech^2(sp) sigmoid(x); in place the input is
// kept for it.
#ifndef CREMA_LAYERS_MISH_LAYER_HPP_
#define CREMA_LAYERS_MISH_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class MishLayer : public NeuronLayer<Dtype> {
 public:
  explicit MishLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  const char* type() const override { return "Mish"; }

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
  // In place: the input of the last forward pass, which backward reads.
  Blob<Dtype> input_copy_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_MISH_LAYER_HPP_
