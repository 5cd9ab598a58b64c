// InnerProduct on oneDNN primitives: what an InnerProduct layer with engine
// DNNL is in CPU mode in CREMA_DNNL builds, for float data, and with
// compute_precision BF16 on a CPU with avx512_bf16 whatever the engine but
// CAFFE. Same blobs and semantics as the reference layer (weights [N, K], or
// [K, N] with transpose; accumulated parameter gradients), on the blobs'
// memory; the primitives are made once per bottom shape.
#ifndef CREMA_LAYERS_DNNL_INNER_PRODUCT_LAYER_HPP_
#define CREMA_LAYERS_DNNL_INNER_PRODUCT_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/inner_product_layer.hpp"

namespace crema {

template <typename Dtype>
class DnnlInnerProductLayer : public InnerProductLayer<Dtype> {
 public:
  // where_faster (engine DEFAULT): the reference body runs in float, faster
  // than oneDNN's on the weight gradient (AlexNet's fc layers); oneDNN runs
  // only in bf16, and only over batches of kBf16MinRows rows or more.
  explicit DnnlInnerProductLayer(const LayerParameter& param, bool where_faster = false);
  // Below this many rows an inner product streams its weights more than it
  // computes, and bf16's conversions of them cost more than its products
  // save: AlexNet's fc6-fc8 forward + backward took 169 ms in bf16 against 97
  // in float at batch 32, 240 against 235 at 128, 351 against 439 at 256.
  static constexpr int kBf16MinRows = 192;
  ~DnnlInnerProductLayer() override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  // Whether the current shape runs on oneDNN (else on the reference body).
  bool uses_dnnl() const { return static_cast<bool>(primitives_); }
  // Whether it runs on oneDNN in bf16: bfloat16 operands (bottom, weights,
  // top gradient), float results, gradients and bias.
  bool uses_bf16() const { return uses_dnnl() && bf16_; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  struct Primitives;
  void MakePrimitives();

  const bool where_faster_;
  bool bf16_ = false;
  bool warned_no_bf16_ = false;
  std::unique_ptr<Primitives> primitives_;
  std::vector<int> primitive_shape_;
  // oneDNN writes parameter gradients; Caffe layers add them to the diffs.
  Blob<Dtype> weight_diff_buffer_, bias_diff_buffer_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_DNNL_INNER_PRODUCT_LAYER_HPP_
