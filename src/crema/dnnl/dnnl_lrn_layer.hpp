// LRN on oneDNN primitives: what an LRN layer with engine DNNL is in CPU mode
// in CREMA_DNNL builds, for float data. Both regions with Caffe's scale
// (across channels: k + alpha / n * sum of squares; within a channel: 1 +
// alpha / n^2 * sum, as Caffe's pooling of squares gives).
#ifndef CREMA_DNNL_DNNL_LRN_LAYER_HPP_
#define CREMA_DNNL_DNNL_LRN_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/lrn_layer.hpp"

namespace crema {

template <typename Dtype>
class DnnlLRNLayer : public LRNLayer<Dtype> {
 public:
  // for_default (engine DEFAULT): oneDNN where DefaultLRNRunsDnnl says
  // (default_policy.hpp).
  explicit DnnlLRNLayer(const LayerParameter& param, bool for_default = false);
  ~DnnlLRNLayer() override;
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

#endif  // CREMA_DNNL_DNNL_LRN_LAYER_HPP_
