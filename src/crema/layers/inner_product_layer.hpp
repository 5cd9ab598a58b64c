// InnerProduct (fully connected): views the bottom as an M x K matrix, with
// M = count(0, axis) and K = count(axis), and computes top = bottom * W^T + b.
// The weights W are N x K (K x N with transpose), the bias b has N entries.
#ifndef CREMA_LAYERS_INNER_PRODUCT_LAYER_HPP_
#define CREMA_LAYERS_INNER_PRODUCT_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class InnerProductLayer : public Layer<Dtype> {
 public:
  explicit InnerProductLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "InnerProduct"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 protected:
  // The first axis folded into K, in [0, num_axes).
  int CanonicalAxis(const Blob<Dtype>& bottom) const;

  int batch_size_ = 0;  // M: rows of the bottom matrix
  int input_size_ = 0;  // K: columns of the bottom matrix
  int num_output_ = 0;  // N
  bool bias_term_ = true;
  bool transpose_ = false;
  // M ones: the bias is added as the rank-1 product ones * b^T.
  Blob<Dtype> bias_multiplier_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_INNER_PRODUCT_LAYER_HPP_
