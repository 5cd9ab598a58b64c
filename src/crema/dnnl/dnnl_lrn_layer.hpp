// LRN on oneDNN primitives: what an LRN layer with engine DNNL is in CPU mode
// in CREMA_DNNL builds, for float data. Both regions with Caffe's scale
// (across channels: k + alpha / n * sum of squares; within a channel: 1 +
// alpha / n^2 * sum, as Caffe's pooling of squares gives).
#ifndef CREMA_DNNL_DNNL_LRN_LAYER_HPP_
#define CREMA_DNNL_DNNL_LRN_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/lrn_layer.hpp"

namespace crema {

struct DnnlLRNPrimitives;

template <typename Dtype>
class DnnlLRNLayer : public DnnlTwin<Dtype, LRNLayer, DnnlLRNPrimitives> {
 public:
  explicit DnnlLRNLayer(const LayerParameter& param);

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlLRNPrimitives* p) override;
  const char* DnnlOperation() const override { return "LRN"; }
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_LRN_LAYER_HPP_
