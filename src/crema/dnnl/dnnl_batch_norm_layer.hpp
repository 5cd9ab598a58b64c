// BatchNorm on oneDNN primitives: what a BatchNorm layer with engine DNNL (a
// Crema field) is in CPU mode in CREMA_DNNL builds, for float data. The same
// blobs as the reference layer (running mean, variance and their factor, with
// Caffe's unbiased variance) and both modes (batch or global statistics).
#ifndef CREMA_DNNL_DNNL_BATCH_NORM_LAYER_HPP_
#define CREMA_DNNL_DNNL_BATCH_NORM_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/batch_norm_layer.hpp"

namespace crema {

struct DnnlBatchNormPrimitives;

template <typename Dtype>
class DnnlBatchNormLayer : public DnnlTwin<Dtype, BatchNormLayer, DnnlBatchNormPrimitives> {
 public:
  explicit DnnlBatchNormLayer(const LayerParameter& param);

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlBatchNormPrimitives* p) override;
  const char* DnnlOperation() const override { return "batch normalisation"; }
  std::vector<int> PrimitiveShape(const std::vector<Blob<Dtype>*>& bottom) const override;
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // In place, the backward pass needs the input the forward pass overwrote.
  Blob<Dtype> bottom_copy_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_BATCH_NORM_LAYER_HPP_
