// Pooling on oneDNN primitives: what a Pooling layer with engine DNNL is in
// CPU mode in CREMA_DNNL builds, for float data. MAX and AVE with Caffe's
// window sizes (ceil or floor rounding, padding, global pooling); STOCHASTIC,
// a second (argmax) top, and an AVE whose last window runs past the padding
// with padding on (Caffe's divisor there is neither of oneDNN's) run the
// reference body.
#ifndef CREMA_DNNL_DNNL_POOLING_LAYER_HPP_
#define CREMA_DNNL_DNNL_POOLING_LAYER_HPP_

#include <dnnl.hpp>
#include <memory>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/pooling_layer.hpp"

namespace crema {

// oneDNN's form of a Caffe pooling window: its algorithm and where the
// windows lie.
struct DnnlPoolingForm {
  dnnl::algorithm algorithm;
  dnnl::memory::dims strides, kernel, left, right;
};
// False where oneDNN has no form for it: STOCHASTIC, and an AVE whose last
// window runs past the padding with padding on (Caffe's divisor there is
// neither of oneDNN's).
bool DnnlPoolingFormOf(PoolingParameter::PoolMethod method, const PoolingGeometry& g,
                       DnnlPoolingForm* form);

struct DnnlPoolingPrimitives;

template <typename Dtype>
class DnnlPoolingLayer : public DnnlTwin<Dtype, PoolingLayer, DnnlPoolingPrimitives> {
 public:
  explicit DnnlPoolingLayer(const LayerParameter& param);

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlPoolingPrimitives* p) override;
  const char* DnnlOperation() const override { return "pooling"; }
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_POOLING_LAYER_HPP_
