// ReLU (and leaky ReLU) on oneDNN's eltwise primitive: what a ReLU layer with
// engine DNNL is in CPU mode in CREMA_DNNL builds, for float data; in place
// as the reference layer (the backward pass reads the sign of the bottom,
// which in place is the top's).
#ifndef CREMA_DNNL_DNNL_RELU_LAYER_HPP_
#define CREMA_DNNL_DNNL_RELU_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/relu_layer.hpp"

namespace crema {

template <typename Dtype>
class DnnlReLULayer : public ReLULayer<Dtype> {
 public:
  // for_default (engine DEFAULT): oneDNN where DefaultReLURunsDnnl says
  // (default_policy.hpp).
  explicit DnnlReLULayer(const LayerParameter& param, bool for_default = false);
  ~DnnlReLULayer() override;
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
  void MakePrimitives(const Blob<Dtype>& bottom);

  const bool for_default_;
  std::unique_ptr<Primitives> primitives_;
  std::vector<int> primitive_shape_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_RELU_LAYER_HPP_
