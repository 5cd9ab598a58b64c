// AbsVal: y = |x|. Backward needs the sign of x, which y has lost, so the
// layer refuses to compute in place.
#ifndef CREMA_LAYERS_ABSVAL_LAYER_HPP_
#define CREMA_LAYERS_ABSVAL_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class AbsValLayer : public NeuronLayer<Dtype> {
 public:
  explicit AbsValLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "AbsVal"; }

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

#endif  // CREMA_LAYERS_ABSVAL_LAYER_HPP_
