// InnerProduct on oneDNN primitives: what an InnerProduct layer with engine
// DNNL is in CPU mode in CREMA_DNNL builds, for float data. Same blobs and
// semantics as the reference layer (weights [N, K], or [K, N] with transpose;
// accumulated parameter gradients), on the blobs' memory in place; the
// primitives are made once per bottom shape.
#ifndef CREMA_LAYERS_DNNL_INNER_PRODUCT_LAYER_HPP_
#define CREMA_LAYERS_DNNL_INNER_PRODUCT_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/inner_product_layer.hpp"

namespace crema {

template <typename Dtype>
class DnnlInnerProductLayer : public InnerProductLayer<Dtype> {
 public:
  explicit DnnlInnerProductLayer(const LayerParameter& param);
  ~DnnlInnerProductLayer() override;
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
  void MakePrimitives();

  std::unique_ptr<Primitives> primitives_;
  std::vector<int> primitive_shape_;
  // oneDNN writes parameter gradients; Caffe layers add them to the diffs.
  Blob<Dtype> weight_diff_buffer_, bias_diff_buffer_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_DNNL_INNER_PRODUCT_LAYER_HPP_
