// Swish: y = x * sigmoid(beta * x) (Ramachandran et al., 2017).
#ifndef CREMA_LAYERS_SWISH_LAYER_HPP_
#define CREMA_LAYERS_SWISH_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class SwishLayer : public NeuronLayer<Dtype> {
 public:
  explicit SwishLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Swish"; }

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
  Dtype beta_ = 1;
  // sigmoid(beta * x) from the last forward, which backward reuses.
  Blob<Dtype> sigmoid_output_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_SWISH_LAYER_HPP_
