// Softmax on oneDNN primitives: what a Softmax layer with engine DNNL is in
// CPU mode in CREMA_DNNL builds, for float data, along the layer's axis.
#ifndef CREMA_DNNL_DNNL_SOFTMAX_LAYER_HPP_
#define CREMA_DNNL_DNNL_SOFTMAX_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/softmax_layer.hpp"

namespace crema {

struct DnnlSoftmaxPrimitives;

template <typename Dtype>
class DnnlSoftmaxLayer : public DnnlTwin<Dtype, SoftmaxLayer, DnnlSoftmaxPrimitives> {
 public:
  explicit DnnlSoftmaxLayer(const LayerParameter& param);

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlSoftmaxPrimitives* p) override;
  const char* DnnlOperation() const override { return "softmax"; }
  std::vector<int> PrimitiveShape(const std::vector<Blob<Dtype>*>& bottom) const override;
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_SOFTMAX_LAYER_HPP_
