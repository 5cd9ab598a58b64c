// Pooling on oneDNN primitives: what a Pooling layer with engine DNNL is in
// CPU mode in CREMA_DNNL builds, for float data. MAX and AVE with Caffe's
// window sizes (ceil or floor rounding, padding, global pooling); STOCHASTIC,
// a second (argmax) top, and an AVE whose last window runs past the padding
// with padding on (Caffe's divisor there is neither of oneDNN's) run the
// reference body.
#ifndef CREMA_DNNL_DNNL_POOLING_LAYER_HPP_
#define CREMA_DNNL_DNNL_POOLING_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/pooling_layer.hpp"

namespace crema {

template <typename Dtype>
class DnnlPoolingLayer : public PoolingLayer<Dtype> {
 public:
  // for_default (engine DEFAULT): oneDNN where DefaultPoolingRunsDnnl says
  // (default_policy.hpp).
  explicit DnnlPoolingLayer(const LayerParameter& param, bool for_default = false);
  ~DnnlPoolingLayer() override;
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
  void MakePrimitives(const Blob<Dtype>& bottom, const std::vector<Blob<Dtype>*>& top);

  const bool for_default_;
  std::unique_ptr<Primitives> primitives_;
  std::vector<int> primitive_shape_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_POOLING_LAYER_HPP_
