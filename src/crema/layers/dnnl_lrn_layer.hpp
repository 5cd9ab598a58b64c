// LRN on oneDNN primitives: what an LRN layer with engine DNNL is in CPU mode
// in CREMA_DNNL builds, for float data. Both regions with Caffe's scale
// (across channels: k + alpha / n * sum of squares; within a channel: 1 +
// alpha / n^2 * sum, as Caffe's pooling of squares gives).
#ifndef CREMA_LAYERS_DNNL_LRN_LAYER_HPP_
#define CREMA_LAYERS_DNNL_LRN_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/lrn_layer.hpp"

namespace crema {

template <typename Dtype>
class DnnlLRNLayer : public LRNLayer<Dtype> {
 public:
  // where_faster (engine DEFAULT): the reference body where it is faster.
  // oneDNN's LRN backward on plain (nchw) blobs is its slow generic body
  // (AlexNet's norm1, batch 10: 126 ms against the reference's 3 ms), and
  // within a channel its forward is slower too; its across-channels forward
  // is the faster one (3 ms against 7). So: oneDNN only for across-channels
  // LRN in TEST-phase nets, which run forward only.
  explicit DnnlLRNLayer(const LayerParameter& param, bool where_faster = false);
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

  const bool where_faster_;
  std::unique_ptr<Primitives> primitives_;
  std::vector<int> primitive_shape_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_DNNL_LRN_LAYER_HPP_
