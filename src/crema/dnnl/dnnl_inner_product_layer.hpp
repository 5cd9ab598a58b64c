// InnerProduct on oneDNN primitives: what an InnerProduct layer with engine
// DNNL is in CPU mode in CREMA_DNNL builds, for float data, and with
// compute_precision BF16 on a CPU with avx512_bf16 whatever the engine but
// CAFFE. Same blobs and semantics as the reference layer (weights [N, K], or
// [K, N] with transpose; accumulated parameter gradients), on the blobs'
// memory; the primitives are made once per bottom shape.
#ifndef CREMA_DNNL_DNNL_INNER_PRODUCT_LAYER_HPP_
#define CREMA_DNNL_DNNL_INNER_PRODUCT_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/inner_product_layer.hpp"

namespace crema {

struct DnnlInnerProductPrimitives;

template <typename Dtype>
class DnnlInnerProductLayer
    : public DnnlTwin<Dtype, InnerProductLayer, DnnlInnerProductPrimitives> {
 public:
  explicit DnnlInnerProductLayer(const LayerParameter& param);
  // Whether it runs on oneDNN in bf16: bfloat16 operands (bottom, weights,
  // top gradient), float results, gradients and bias.
  bool uses_bf16() const { return this->uses_dnnl() && bf16_; }

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlInnerProductPrimitives* p) override;
  void PrimitivesMade() override;
  const char* DnnlOperation() const override { return "inner product"; }
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  bool bf16_ = false;
  bool warned_no_bf16_ = false;
  // oneDNN writes parameter gradients; Caffe layers add them to the diffs.
  Blob<Dtype> weight_diff_buffer_, bias_diff_buffer_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_INNER_PRODUCT_LAYER_HPP_
