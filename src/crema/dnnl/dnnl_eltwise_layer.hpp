// Eltwise on oneDNN primitives: what an Eltwise layer with engine DNNL (a
// Crema field) is in CPU mode in CREMA_DNNL builds, for float data. SUM with
// its coefficients is oneDNN's sum forward and a scaled copy backward; PROD
// and MAX (whose backward passes need the reference body's forward state) run
// the reference body.
#ifndef CREMA_DNNL_DNNL_ELTWISE_LAYER_HPP_
#define CREMA_DNNL_DNNL_ELTWISE_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/eltwise_layer.hpp"

namespace crema {

template <typename Dtype>
class DnnlEltwiseLayer : public EltwiseLayer<Dtype> {
 public:
  // for_default: made for engine DEFAULT, which runs oneDNN here wherever it
  // serves (the types default_policy.hpp gives this twin at all).
  explicit DnnlEltwiseLayer(const LayerParameter& param, bool for_default = false);
  ~DnnlEltwiseLayer() override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  // Whether the current shape runs on oneDNN (else on the reference body).
  bool uses_dnnl() const { return static_cast<bool>(primitives_); }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  struct Primitives;
  void MakePrimitives(const std::vector<Blob<Dtype>*>& bottom);

  std::unique_ptr<Primitives> primitives_;
  std::vector<int> primitive_shape_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_ELTWISE_LAYER_HPP_
