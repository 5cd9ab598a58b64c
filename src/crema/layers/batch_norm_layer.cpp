#include "crema/layers/batch_norm_layer.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "crema/filler.hpp"
#include "crema/util/thread_pool.hpp"

namespace crema {

template <typename Dtype>
void BatchNormLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const BatchNormParameter& param = this->layer_param_.batch_norm_param();
  use_global_stats_ =
      param.has_use_global_stats() ? param.use_global_stats() : this->phase_ == TEST;
  moving_average_fraction_ = param.moving_average_fraction();
  eps_ = param.eps();
  CREMA_LAYER_REQUIRE(eps_ >= 0, "eps must be non-negative, got " << param.eps());
  CREMA_LAYER_REQUIRE(
      bottom[0]->num_axes() >= 1,
      "needs a bottom with at least one axis, got shape " << bottom[0]->shape_string());
  channels_ = bottom[0]->num_axes() == 1 ? 1 : bottom[0]->shape(1);
  scale_bias_ = param.scale_bias() || param.has_scale_filler() || param.has_bias_filler();
  if (this->blobs_.empty()) {
    MakeBlobs();
  } else {
    CheckLoadedBlobs();  // statistics (and scale and bias) loaded with trained weights
  }
  FreezeStatistics();
}

template <typename Dtype>
void BatchNormLayer<Dtype>::MakeBlobs() {
  const BatchNormParameter& param = this->layer_param_.batch_norm_param();
  this->blobs_.resize(scale_bias_ ? 5 : 3);
  this->blobs_[0].reset(new Blob<Dtype>(std::vector<int>{channels_}));
  this->blobs_[1].reset(new Blob<Dtype>(std::vector<int>{channels_}));
  this->blobs_[2].reset(new Blob<Dtype>(std::vector<int>{1}));
  for (auto& blob : this->blobs_) {
    if (blob) cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_data());
  }
  if (!scale_bias_) return;
  FillerParameter one, zero;
  one.set_type("constant");
  one.set_value(1);
  zero.set_type("constant");
  this->blobs_[3].reset(new Blob<Dtype>(std::vector<int>{channels_}));
  this->blobs_[4].reset(new Blob<Dtype>(std::vector<int>{channels_}));
  GetFiller<Dtype>(param.has_scale_filler() ? param.scale_filler() : one)
      ->Fill(this->blobs_[3].get());
  GetFiller<Dtype>(param.has_bias_filler() ? param.bias_filler() : zero)
      ->Fill(this->blobs_[4].get());
}

template <typename Dtype>
void BatchNormLayer<Dtype>::CheckLoadedBlobs() const {
  const size_t expected = scale_bias_ ? 5 : 3;
  CREMA_LAYER_REQUIRE(this->blobs_.size() == expected,
                      "needs " << expected << " blobs (mean, variance, scale factor"
                               << (scale_bias_ ? ", scale, bias" : "") << "), got "
                               << this->blobs_.size()
                               << (this->blobs_.size() == 5 && !scale_bias_
                                       ? " (a learned scale and bias: set "
                                         "batch_norm_param { scale_bias: true })"
                                       : ""));
  CREMA_LAYER_REQUIRE(
      this->blobs_[0]->count() == channels_ && this->blobs_[1]->count() == channels_ &&
          this->blobs_[2]->count() == 1,
      "statistics blobs of shapes "
          << this->blobs_[0]->shape_string() << ", " << this->blobs_[1]->shape_string() << ", "
          << this->blobs_[2]->shape_string() << " do not fit " << channels_
          << " channels (expected (" << channels_ << "), (" << channels_ << "), (1))");
  if (!scale_bias_) return;
  CREMA_LAYER_REQUIRE(
      this->blobs_[3]->count() == channels_ && this->blobs_[4]->count() == channels_,
      "scale and bias blobs of shapes " << this->blobs_[3]->shape_string() << ", "
                                        << this->blobs_[4]->shape_string() << " do not fit "
                                        << channels_ << " channels");
}

template <typename Dtype>
void BatchNormLayer<Dtype>::FreezeStatistics() {
  LayerParameter& layer_param = this->layer_param_;
  const int blobs = static_cast<int>(this->blobs_.size());
  CREMA_LAYER_REQUIRE(layer_param.param_size() <= blobs,
                      "has " << layer_param.param_size() << " param specs but only " << blobs
                             << " blobs (mean, variance, scale factor"
                             << (scale_bias_ ? ", scale, bias" : "") << ")");
  for (int i = 0; i < 3; ++i) {
    if (layer_param.param_size() == i) layer_param.add_param()->set_lr_mult(0);
    CREMA_LAYER_REQUIRE(layer_param.param(i).lr_mult() == 0,
                        "param " << i << " has lr_mult " << layer_param.param(i).lr_mult()
                                 << ", but the mean, variance and scale factor blobs are "
                                    "running statistics, not learned: give lr_mult: 0 or no "
                                    "param at all (use a Scale layer for a learned scale and "
                                    "shift)");
    this->set_param_propagate_down(i, false);
  }
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int bottom_channels = bottom[0]->num_axes() == 1 ? 1 : bottom[0]->shape(1);
  CREMA_LAYER_REQUIRE(bottom_channels == channels_,
                      "was set up for " << channels_ << " channels, but bottom[0] of shape "
                                        << bottom[0]->shape_string() << " has " << bottom_channels);
  num_ = bottom[0]->shape(0);
  spatial_dim_ = bottom[0]->num_axes() > 2 ? bottom[0]->count(2) : 1;
  if (bottom[0] != top[0]) top[0]->ReshapeLike(*bottom[0]);
  x_norm_.ReshapeLike(*bottom[0]);
  scratch_.ReshapeLike(*bottom[0]);
  if (scale_bias_) scaled_top_diff_.ReshapeLike(*bottom[0]);
  const std::vector<int> per_channel{channels_};
  mean_.Reshape(per_channel);
  variance_.Reshape(per_channel);
  std_.Reshape(per_channel);
  mean_top_diff_.Reshape(per_channel);
  mean_top_diff_x_norm_.Reshape(per_channel);
  image_channel_sums_.Reshape({num_ * channels_});
  ones_.Reshape({std::max(num_, spatial_dim_)});
}

template <typename Dtype>
Dtype BatchNormLayer<Dtype>::RunningAverageScale() const {
  const Dtype factor = this->blobs_[2]->cpu_data()[0];
  return factor == 0 ? Dtype(0) : Dtype(1) / factor;
}

// Channels split over the pool; each sums its planes image by image.
template <typename Dtype>
void BatchNormLayer<Dtype>::ChannelMeans_cpu(const Dtype* data, Dtype* means) {
  const Dtype scale = Dtype(1) / (num_ * spatial_dim_);
  ParallelForPlanes(channels_, num_ * spatial_dim_, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) {
      Dtype sum = 0;
      for (int n = 0; n < num_; ++n) sum += plane_sum(spatial_dim_, Plane(data, n, c));
      means[c] = sum * scale;
    }
  });
}

template <typename Dtype>
void BatchNormLayer<Dtype>::ChannelVariances_cpu(const Dtype* data, const Dtype* means,
                                                 Dtype* variances) {
  const Dtype scale = Dtype(1) / (num_ * spatial_dim_);
  ParallelForPlanes(channels_, num_ * spatial_dim_, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) {
      Dtype lanes[8] = {};
      Dtype sum = 0;
      for (int n = 0; n < num_; ++n) {
        const Dtype* x = Plane(data, n, c);
        int s = 0;
        for (; s + 8 <= spatial_dim_; s += 8) {
          for (int k = 0; k < 8; ++k) {
            const Dtype centred = x[s + k] - means[c];
            lanes[k] += centred * centred;
          }
        }
        for (; s < spatial_dim_; ++s) sum += (x[s] - means[c]) * (x[s] - means[c]);
      }
      for (int k = 0; k < 8; ++k) sum += lanes[k];
      variances[c] = sum * scale;
    }
  });
}

// Running sums: each decays by the fraction and takes in the batch's
// statistic; the factor sums the same weights, so sum / factor is a weighted
// average. The variance gets the unbiased m / (m - 1).
template <typename Dtype>
void BatchNormLayer<Dtype>::UpdateRunningStatistics(const Dtype* mean, const Dtype* variance,
                                                    int count) {
  Dtype* factor = this->blobs_[2]->mutable_cpu_data();
  factor[0] = factor[0] * moving_average_fraction_ + 1;
  cpu_axpby(channels_, Dtype(1), mean, moving_average_fraction_,
            this->blobs_[0]->mutable_cpu_data());
  const int m = count / channels_;
  const Dtype unbiased = m > 1 ? Dtype(m) / (m - 1) : Dtype(1);
  cpu_axpby(channels_, unbiased, variance, moving_average_fraction_,
            this->blobs_[1]->mutable_cpu_data());
}

// One pass over the data for the normalisation (two more for batch
// statistics), planes split over the pool: the layer is memory-bound.
template <typename Dtype>
void BatchNormLayer<Dtype>::ComputeStatistics_cpu(const Dtype* bottom_data, int count) {
  Dtype* mean = mean_.mutable_cpu_data();
  Dtype* variance = variance_.mutable_cpu_data();
  if (use_global_stats_) {
    const Dtype scale = RunningAverageScale();
    cpu_scale(channels_, scale, this->blobs_[0]->cpu_data(), mean);
    cpu_scale(channels_, scale, this->blobs_[1]->cpu_data(), variance);
  } else {
    ChannelMeans_cpu(bottom_data, mean);
    ChannelVariances_cpu(bottom_data, mean, variance);
    UpdateRunningStatistics(mean, variance, count);
  }
  Dtype* std = std_.mutable_cpu_data();
  for (int c = 0; c < channels_; ++c) std[c] = std::sqrt(variance[c] + eps_);
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  ComputeStatistics_cpu(bottom_data, bottom[0]->count());
  // With global statistics Backward needs no normalised copy (unless it
  // learns a scale).
  Normalize_cpu(bottom_data, top[0]->mutable_cpu_data(),
                use_global_stats_ && !scale_bias_ ? nullptr : x_norm_.mutable_cpu_data());
  if (scale_bias_) ApplyScaleBias_cpu(top[0]->mutable_cpu_data());
}

template <typename Dtype>
void BatchNormLayer<Dtype>::ApplyScaleBias_cpu(Dtype* top_data) const {
  const Dtype* scale = this->blobs_[3]->cpu_data();
  const Dtype* bias = this->blobs_[4]->cpu_data();
  ParallelForPlanes(num_ * channels_, spatial_dim_, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      const int c = plane % channels_;
      Dtype* y = top_data + static_cast<size_t>(plane) * spatial_dim_;
      for (int s = 0; s < spatial_dim_; ++s) y[s] = y[s] * scale[c] + bias[c];
    }
  });
}

// d scale[c] += sum dy * x_norm, d bias[c] += sum dy (over batch and
// space), accumulated as every parameter gradient is; the normalised
// output's gradient is dy * scale[c].
template <typename Dtype>
const Dtype* BatchNormLayer<Dtype>::ScaleBiasBackward_cpu(const Dtype* top_diff) {
  const Dtype* x_norm = x_norm_.cpu_data();
  Dtype* scale_diff = this->blobs_[3]->mutable_cpu_diff();
  Dtype* bias_diff = this->blobs_[4]->mutable_cpu_diff();
  const bool learn_scale = this->param_propagate_down(3),
             learn_bias = this->param_propagate_down(4);
  ParallelForPlanes(channels_, num_ * spatial_dim_, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) {
      Dtype sum = 0, dot = 0;
      for (int n = 0; n < num_; ++n) {
        Dtype plane_sum_value, plane_dot;
        plane_sum_and_dot(spatial_dim_, Plane(top_diff, n, c), Plane(x_norm, n, c),
                          &plane_sum_value, &plane_dot);
        sum += plane_sum_value;
        dot += plane_dot;
      }
      if (learn_scale) scale_diff[c] += dot;
      if (learn_bias) bias_diff[c] += sum;
    }
  });
  const Dtype* scale = this->blobs_[3]->cpu_data();
  Dtype* scaled = scaled_top_diff_.mutable_cpu_data();
  ParallelForPlanes(num_ * channels_, spatial_dim_, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      const size_t offset = static_cast<size_t>(plane) * spatial_dim_;
      const Dtype factor = scale[plane % channels_];
      for (int s = 0; s < spatial_dim_; ++s) scaled[offset + s] = top_diff[offset + s] * factor;
    }
  });
  return scaled;
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Normalize_cpu(const Dtype* bottom_data, Dtype* top_data,
                                          Dtype* x_norm) {
  const Dtype* mean = mean_.cpu_data();
  const Dtype* std = std_.cpu_data();
  ParallelForPlanes(num_ * channels_, spatial_dim_, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      const int c = plane % channels_;
      const size_t offset = static_cast<size_t>(plane) * spatial_dim_;
      const Dtype* x = bottom_data + offset;
      Dtype* y = top_data + offset;
      for (int s = 0; s < spatial_dim_; ++s) y[s] = (x[s] - mean[c]) / std[c];
      if (x_norm) std::copy(y, y + spatial_dim_, x_norm + offset);
    }
  });
}

// With batch statistics, mean and variance depend on every input too:
//   dx = (dy - mean(dy) - y * mean(dy * y)) / std, means per channel.
// With global statistics they are constants: dx = dy / std.
template <typename Dtype>
void BatchNormLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->cpu_diff();
  if (scale_bias_) top_diff = ScaleBiasBackward_cpu(top_diff);
  if (!propagate_down[0]) return;
  const Dtype* std = std_.cpu_data();
  // In place, bottom_diff is top_diff: each element is read before written.
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  if (use_global_stats_) {
    ParallelForPlanes(num_ * channels_, spatial_dim_, [&](int begin, int end) {
      for (int plane = begin; plane < end; ++plane) {
        const int c = plane % channels_;
        const size_t offset = static_cast<size_t>(plane) * spatial_dim_;
        for (int s = 0; s < spatial_dim_; ++s) {
          bottom_diff[offset + s] = top_diff[offset + s] / std[c];
        }
      }
    });
    return;
  }
  const Dtype* x_norm = x_norm_.cpu_data();
  Dtype* mean_top_diff = mean_top_diff_.mutable_cpu_data();
  Dtype* mean_top_diff_x_norm = mean_top_diff_x_norm_.mutable_cpu_data();
  const Dtype scale = Dtype(1) / (num_ * spatial_dim_);
  ParallelForPlanes(channels_, num_ * spatial_dim_, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) {
      Dtype sum = 0, dot = 0;
      for (int n = 0; n < num_; ++n) {
        Dtype plane_sum_value, plane_dot;
        plane_sum_and_dot(spatial_dim_, Plane(top_diff, n, c), Plane(x_norm, n, c),
                          &plane_sum_value, &plane_dot);
        sum += plane_sum_value;
        dot += plane_dot;
      }
      mean_top_diff[c] = sum * scale;
      mean_top_diff_x_norm[c] = dot * scale;
    }
  });
  ParallelForPlanes(num_ * channels_, spatial_dim_, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      const int c = plane % channels_;
      const size_t offset = static_cast<size_t>(plane) * spatial_dim_;
      for (int s = 0; s < spatial_dim_; ++s) {
        const size_t i = offset + s;
        bottom_diff[i] =
            (top_diff[i] - mean_top_diff[c] - x_norm[i] * mean_top_diff_x_norm[c]) / std[c];
      }
    }
  });
}

#ifndef CREMA_CUDA
STUB_GPU(BatchNormLayer);
#endif

INSTANTIATE_CLASS(BatchNormLayer);
REGISTER_LAYER_CLASS(BatchNorm);

}  // namespace crema
