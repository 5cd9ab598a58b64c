// Normalize (SSD, weiliu89/caffe): L2 normalisation with a learned scale.
// The bottom is read as [N, C, S] (S: the product of the axes after the
// second). across_spatial (default): each image n is divided by
// norm_n = sqrt(sum over its C * S values of x^2 + eps); otherwise each
// position (n, s) is divided by norm_ns = sqrt(sum over c of x^2 + eps).
// Then y = scale * x / norm, with one learned scale (channel_shared, shape
// [1]) or one per channel (shape [C]); scale_filler defaults to constant 1.
// With g = top_diff * scale (per element): bottom_diff = g / norm -
// x * (sum of g * x over the norm's group) / norm^3, and the scale's
// gradient, accumulated, is the sum of top_diff * x / norm over its elements.
#ifndef CREMA_LAYERS_NORMALIZE_LAYER_HPP_
#define CREMA_LAYERS_NORMALIZE_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class NormalizeLayer : public Layer<Dtype> {
 public:
  explicit NormalizeLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Normalize"; }
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

 private:
  void CreateScale(int channels);
  // The norm that divides element (n, c, s).
  int NormIndex(int n, int s) const { return across_spatial_ ? n : n * spatial_ + s; }
  int ScaleIndex(int c) const { return channel_shared_ ? 0 : c; }
  void ComputeNorms(const Dtype* x);
  // sum of g * x over each norm's group, with g = top_diff * scale.
  void ComputeScaledDots(const Dtype* x, const Dtype* top_diff, const Dtype* scale,
                         Dtype* dots) const;

  bool across_spatial_ = true;
  bool channel_shared_ = true;
  Dtype eps_ = 0;
  int num_ = 0;
  int channels_ = 0;
  int spatial_ = 0;
  // [N] across_spatial, else [N, S]: forward's norms, read by backward.
  Blob<Dtype> norms_;
  // Backward's sums of g * x, shaped like norms_.
  Blob<Dtype> dots_;
  // In place, forward keeps x here for backward.
  Blob<Dtype> bottom_copy_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_NORMALIZE_LAYER_HPP_
