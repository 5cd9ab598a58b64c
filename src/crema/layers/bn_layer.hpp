// BN: per-channel batch normalisation with its own learned affine map, in
// the two variants of Caffe's forks that share the type name "BN" (and one
// BNParameter, see the proto). Channels are axis 1; statistics are taken over
// the batch and every axis after 1.
// - PSPNet / TSN (hszhao/PSPNet, yjxiong/caffe), the variant of a layer that
//   sets none of scale_filler, shift_filler, bn_mode (or has no bn_param).
//   Blobs slope, bias, mean, variance, each [1, C, 1, 1]. In the TEST phase or
//   when frozen: y = slope * (x - mean) / sqrt(variance + eps) + bias with the
//   stored statistics. In TRAIN when not frozen the batch's mean and biased
//   variance are used instead and the stored ones become running averages,
//   stored = momentum * stored + (1 - momentum) * batch. The statistics are
//   pinned at lr_mult 0 and take no gradient; frozen pins slope and bias at
//   lr_mult 0 too, as the fork does.
// - SegNet (alexgkendall/caffe-segnet). Blobs scale and shift, [1, C, 1, 1].
//   bn_mode LEARN normalises with the batch's statistics in every phase (the
//   fork's tool compute_bn_statistics.py folds the statistics into scale and
//   shift for INFERENCE), y = scale * x_hat + shift; INFERENCE is
//   y = scale * x + shift. eps is 1e-9, the fork's constant, unless given.
// Both variants compute y = a * (x - m) * r + b per channel: (m, r) from the
// batch, from the stored statistics, or (0, 1) for INFERENCE.
#ifndef CREMA_LAYERS_BN_LAYER_HPP_
#define CREMA_LAYERS_BN_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class BNLayer : public Layer<Dtype> {
 public:
  explicit BNLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "BN"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

  // Whether this layer is SegNet's variant (scale, shift, bn_mode).
  bool is_segnet() const { return segnet_; }
  // Whether forward normalises with the batch's own statistics.
  bool uses_batch_statistics() const { return batch_statistics_; }

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
  // Makes the variant's blobs (or checks the loaded ones) for channels_.
  void SetUpBlobs();
  // The PSPNet variant's param specs: the statistics (and, when frozen,
  // slope and bias) at lr_mult 0 and decay_mult 0.
  void PinParamSpecs();
  void PinParamSpec(int index, const char* what);

  // The steps of the passes, each on the CPU and the GPU.
  // sums[c] = scale * sum over channel c of a * b (of a alone when b is null).
  void ChannelSums_cpu(const Dtype* a, const Dtype* b, Dtype scale, Dtype* sums) const;
  // Both in one pass on the CPU: sums[c] = scale * sum of a (when sums is
  // not null) and dots[c] = scale * sum of a * b (when b is not null).
  void ChannelSumsAndDots_cpu(const Dtype* a, const Dtype* b, Dtype scale, Dtype* sums,
                              Dtype* dots) const;
  void ChannelSums_gpu(const Dtype* a, const Dtype* b, Dtype scale, Dtype* sums) const;
  // x_norm_ = x - mean_.
  void Centre_cpu(const Dtype* bottom_data);
  void Centre_gpu(const Dtype* bottom_data);
  // mean_ and variance_ of the batch, inv_std_ from variance_; x_norm_ then
  // holds x - mean_. The PSPNet variant takes them into its running averages.
  void BatchStatistics_cpu(const Dtype* bottom_data);
  void BatchStatistics_gpu(const Dtype* bottom_data);
  // mean_ and inv_std_ when not the batch's: from the stored blobs, or
  // (0, 1) for SegNet's INFERENCE.
  void FixedStatistics_cpu();
  void FixedStatistics_gpu();
  // x_norm_ *= inv_std_, then y = a * x_norm_ + b.
  void ScaleAndShift_cpu(Dtype* top_data);
  void ScaleAndShift_gpu(Dtype* top_data);
  // The number of values each channel's statistics are taken over.
  int ValuesPerChannel() const { return num_ * spatial_dim_; }
  // Image n's plane of channel c in a bottom-shaped array.
  template <typename Pointer>
  Pointer Plane(Pointer data, int n, int c) const {
    return data + (static_cast<size_t>(n) * channels_ + c) * spatial_dim_;
  }
  // The CPU passes' loop over the (image, channel) planes (bn_layer.cpp).
  template <typename Fn>
  void ForEachPlane(const Fn& fn) const;

  bool segnet_ = false;
  bool batch_statistics_ = false;
  Dtype momentum_ = 0;
  Dtype eps_ = 0;
  int channels_ = 0;
  int num_ = 0;
  int spatial_dim_ = 0;

  // Per channel: the mean and 1 / sqrt(variance + eps) forward used, and
  // the batch variance (for the running averages).
  Blob<Dtype> mean_;
  Blob<Dtype> inv_std_;
  Blob<Dtype> variance_;
  // (x - mean_) * inv_std_, kept for backward (the top may change in place).
  Blob<Dtype> x_norm_;
  // Backward's per-channel means of the top diff and of top diff * x_norm.
  Blob<Dtype> mean_top_diff_;
  Blob<Dtype> mean_top_diff_x_norm_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_BN_LAYER_HPP_
