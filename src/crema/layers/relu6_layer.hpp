// ReLU6 (the MobileNet v2 forks): y = min(max(x, 0), 6). The gradient passes
// where 0 < x < 6 and is zero elsewhere, the kinks included.
#ifndef CREMA_LAYERS_RELU6_LAYER_HPP_
#define CREMA_LAYERS_RELU6_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class ReLU6Layer : public NeuronLayer<Dtype> {
 public:
  explicit ReLU6Layer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  const char* type() const override { return "ReLU6"; }

 protected:
  // 0 < y < 6 exactly where 0 < x < 6 (y == x there, y is 0 or 6 elsewhere,
  // NaN stays NaN), so backward reads the top: in place, nothing is kept.
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

#endif  // CREMA_LAYERS_RELU6_LAYER_HPP_
