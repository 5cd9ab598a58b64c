// BatchNorm: normalises each channel (axis 1) over the batch and spatial
// positions, y = (x - mean) / sqrt(var + eps), with no learned scale or shift
// in BVLC's layer (follow it with a Scale layer for those). Training uses the
// batch's statistics and updates running sums of them; with use_global_stats
// (the default at TEST) the running averages are used instead. Its first
// three blobs, the running mean [C], the running variance [C] and their
// common scale factor [1], are statistics, never touched by the solver.
// NVCaffe's and OpenCV's scale_bias (or NVCaffe's scale_filler or
// bias_filler alone) adds a learned scale [C] and bias [C] as blobs 3 and 4:
// y = scale * (x - mean) / sqrt(var + eps) + bias.
#ifndef CREMA_LAYERS_BATCH_NORM_LAYER_HPP_
#define CREMA_LAYERS_BATCH_NORM_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class BatchNormLayer : public Layer<Dtype> {
 public:
  explicit BatchNormLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "BatchNorm"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

  // Whether the layer normalises with its stored statistics (a per-channel
  // affine map then).
  bool uses_global_stats() const { return use_global_stats_; }
  // Whether it learns a scale and bias of its own (the forks' scale_bias).
  bool learns_scale_bias() const { return scale_bias_; }

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
  // Pins the three statistics blobs at lr_mult 0 and out of backward.
  void FreezeStatistics();
  // The statistics blobs, and with scale_bias the scale and bias ones.
  void MakeBlobs();
  void CheckLoadedBlobs() const;
  // scale_bias: top = scale * top + bias in place (top holds x_norm).
  void ApplyScaleBias_cpu(Dtype* top_data) const;
  // scale_bias: the scale's and bias's gradients from the top's, and the
  // normalised output's gradient, top_diff * scale, into scaled_top_diff_.
  const Dtype* ScaleBiasBackward_cpu(const Dtype* top_diff);
  void ApplyScaleBias_gpu(Dtype* top_data) const;
  const Dtype* ScaleBiasBackward_gpu(const Dtype* top_diff);
  // The statistics the CPU forward pass normalises with, into mean_ and
  // std_ (from the batch, taken into the running ones, or the stored ones).
  void ComputeStatistics_cpu(const Dtype* bottom_data, int count);
  // The scale that turns the running sums into averages.
  Dtype RunningAverageScale() const;
  // Takes one batch's statistics (over `count` values) into the running ones.
  void UpdateRunningStatistics(const Dtype* mean, const Dtype* variance, int count);
  // Mean of each channel of a bottom-shaped array, over batch and space.
  void ChannelMeans_cpu(const Dtype* data, Dtype* means);
  // Mean of each channel's squared distance to its mean.
  void ChannelVariances_cpu(const Dtype* data, const Dtype* means, Dtype* variances);
  // Image n's plane of channel c in a bottom-shaped array.
  template <typename Pointer>
  Pointer Plane(Pointer data, int n, int c) const {
    return data + (static_cast<size_t>(n) * channels_ + c) * spatial_dim_;
  }
  void ChannelMeans_gpu(const Dtype* data, Dtype* means);

  // The normalisation from mean_ and std_, planes split over the pool; with
  // x_norm, a copy of the output too.
  void Normalize_cpu(const Dtype* bottom_data, Dtype* top_data, Dtype* x_norm);

  bool use_global_stats_ = false;
  bool scale_bias_ = false;
  Dtype moving_average_fraction_ = 0;
  Dtype eps_ = 0;
  int channels_ = 0;
  // bottom[0] viewed as [num_, channels_, spatial_dim_].
  int num_ = 0;
  int spatial_dim_ = 0;

  // The statistics the forward pass normalised with.
  Blob<Dtype> mean_;
  Blob<Dtype> variance_;
  Blob<Dtype> std_;  // sqrt(variance_ + eps)
  // The normalised output, kept for backward (the top may be changed in
  // place by the next layer); with global statistics the CPU body needs none.
  Blob<Dtype> x_norm_;
  // Backward's per-channel means of the top diff and of top diff * x_norm.
  Blob<Dtype> mean_top_diff_;
  Blob<Dtype> mean_top_diff_x_norm_;
  // Element-wise scratch of the GPU body (squares, products).
  Blob<Dtype> scratch_;
  // scale_bias: the normalised output's gradient, top diff * scale.
  Blob<Dtype> scaled_top_diff_;
  // GPU reduction scratch: per (image, channel) sums, and ones to reduce with.
  Blob<Dtype> image_channel_sums_;
  Blob<Dtype> ones_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_BATCH_NORM_LAYER_HPP_
