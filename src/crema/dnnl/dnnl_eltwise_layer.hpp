// Eltwise on oneDNN primitives: what an Eltwise layer with engine DNNL (a
// Crema field) is in CPU mode in CREMA_DNNL builds, for float data. SUM with
// its coefficients is oneDNN's sum forward and a scaled copy backward; PROD
// and MAX (whose backward passes need the reference body's forward state) run
// the reference body.
#ifndef CREMA_DNNL_DNNL_ELTWISE_LAYER_HPP_
#define CREMA_DNNL_DNNL_ELTWISE_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/eltwise_layer.hpp"

namespace crema {

struct DnnlEltwisePrimitives;

template <typename Dtype>
class DnnlEltwiseLayer : public DnnlTwin<Dtype, EltwiseLayer, DnnlEltwisePrimitives> {
 public:
  explicit DnnlEltwiseLayer(const LayerParameter& param);

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlEltwisePrimitives* p) override;
  const char* DnnlOperation() const override { return "sum"; }
  std::vector<int> PrimitiveShape(const std::vector<Blob<Dtype>*>& bottom) const override;
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_ELTWISE_LAYER_HPP_
