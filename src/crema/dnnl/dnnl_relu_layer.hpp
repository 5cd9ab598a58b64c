// ReLU (and leaky ReLU) on oneDNN's eltwise primitive: what a ReLU layer with
// engine DNNL is in CPU mode in CREMA_DNNL builds, for float data; in place
// as the reference layer (the backward pass reads the sign of the bottom,
// which in place is the top's).
#ifndef CREMA_DNNL_DNNL_RELU_LAYER_HPP_
#define CREMA_DNNL_DNNL_RELU_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/relu_layer.hpp"

namespace crema {

struct DnnlReLUPrimitives;

template <typename Dtype>
class DnnlReLULayer : public DnnlTwin<Dtype, ReLULayer, DnnlReLUPrimitives> {
 public:
  explicit DnnlReLULayer(const LayerParameter& param);

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlReLUPrimitives* p) override;
  const char* DnnlOperation() const override { return "ReLU"; }
  std::vector<int> PrimitiveShape(const std::vector<Blob<Dtype>*>& bottom) const override;
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_RELU_LAYER_HPP_
