#include "crema/layers/batch_norm_layer.hpp"

namespace crema {

namespace {

// Element index -> channel, for data laid out [num, channels, spatial_dim].
__device__ inline int ChannelOf(int64_t index, int channels, int spatial_dim) {
  return static_cast<int>((index / spatial_dim) % channels);
}

template <typename Dtype>
__global__ void SubtractChannelMean(const int64_t n, const Dtype* in, const Dtype* mean,
                                    int channels, int spatial_dim, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    out[index] = in[index] - mean[ChannelOf(index, channels, spatial_dim)];
  }
}

// Divides by the channel's std, writing the result to out and x_norm.
template <typename Dtype>
__global__ void DivideByChannelStd(const int64_t n, const Dtype* std, int channels, int spatial_dim,
                                   Dtype* out, Dtype* x_norm) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype value = out[index] / std[ChannelOf(index, channels, spatial_dim)];
    out[index] = value;
    x_norm[index] = value;
  }
}

template <typename Dtype>
__global__ void StdFromVariance(const int n, const Dtype* variance, Dtype eps, Dtype* std) {
  CUDA_KERNEL_LOOP(index, n) { std[index] = sqrt(variance[index] + eps); }
}

template <typename Dtype>
__global__ void BatchNormBackward(const int64_t n, const Dtype* top_diff, const Dtype* x_norm,
                                  const Dtype* mean_top_diff, const Dtype* mean_top_diff_x_norm,
                                  const Dtype* std, int channels, int spatial_dim,
                                  Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int c = ChannelOf(index, channels, spatial_dim);
    bottom_diff[index] =
        (top_diff[index] - mean_top_diff[c] - x_norm[index] * mean_top_diff_x_norm[c]) / std[c];
  }
}

// y = scale[c] * y + bias[c], in place.
template <typename Dtype>
__global__ void ChannelAffine(const int64_t n, const Dtype* scale, const Dtype* bias, int channels,
                              int spatial_dim, Dtype* data) {
  CUDA_KERNEL_LOOP(index, n) {
    const int c = ChannelOf(index, channels, spatial_dim);
    data[index] = data[index] * scale[c] + bias[c];
  }
}

template <typename Dtype>
__global__ void ScaleByChannel(const int64_t n, const Dtype* in, const Dtype* scale, int channels,
                               int spatial_dim, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    out[index] = in[index] * scale[ChannelOf(index, channels, spatial_dim)];
  }
}

}  // namespace

template <typename Dtype>
void BatchNormLayer<Dtype>::ApplyScaleBias_gpu(Dtype* top_data) const {
  const int64_t count = static_cast<int64_t>(num_) * channels_ * spatial_dim_;
  ChannelAffine<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, this->blobs_[3]->gpu_data(), this->blobs_[4]->gpu_data(), channels_, spatial_dim_,
      top_data);
  CUDA_POST_KERNEL_CHECK;
}

// See the CPU body; channel sums are channel means times the values each.
template <typename Dtype>
const Dtype* BatchNormLayer<Dtype>::ScaleBiasBackward_gpu(const Dtype* top_diff) {
  const int64_t count = static_cast<int64_t>(num_) * channels_ * spatial_dim_;
  const Dtype per_channel = static_cast<Dtype>(num_) * spatial_dim_;
  if (this->param_propagate_down(4)) {
    ChannelMeans_gpu(top_diff, mean_top_diff_.mutable_gpu_data());
    gpu_axpy(channels_, per_channel, mean_top_diff_.gpu_data(),
             this->blobs_[4]->mutable_gpu_diff());
  }
  if (this->param_propagate_down(3)) {
    Dtype* products = scratch_.mutable_gpu_data();
    gpu_mul(static_cast<int>(count), top_diff, x_norm_.gpu_data(), products);
    ChannelMeans_gpu(products, mean_top_diff_x_norm_.mutable_gpu_data());
    gpu_axpy(channels_, per_channel, mean_top_diff_x_norm_.gpu_data(),
             this->blobs_[3]->mutable_gpu_diff());
  }
  Dtype* scaled = scaled_top_diff_.mutable_gpu_data();
  ScaleByChannel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top_diff, this->blobs_[3]->gpu_data(), channels_, spatial_dim_, scaled);
  CUDA_POST_KERNEL_CHECK;
  return scaled;
}

// Two matrix-vector products against ones (over space, then over the batch),
// which (unlike atomics) sum in a fixed order.
template <typename Dtype>
void BatchNormLayer<Dtype>::ChannelMeans_gpu(const Dtype* data, Dtype* means) {
  Dtype* ones = ones_.mutable_gpu_data();
  gpu_set(ones_.count(), Dtype(1), ones);
  Dtype* image_channel_sums = image_channel_sums_.mutable_gpu_data();
  gpu_gemv(CblasNoTrans, num_ * channels_, spatial_dim_, Dtype(1) / (num_ * spatial_dim_), data,
           ones, Dtype(0), image_channel_sums);
  gpu_gemv(CblasTrans, num_, channels_, Dtype(1), image_channel_sums, ones, Dtype(0), means);
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  Dtype* mean = mean_.mutable_gpu_data();
  Dtype* variance = variance_.mutable_gpu_data();
  if (use_global_stats_) {
    const Dtype scale = RunningAverageScale();
    gpu_scale(channels_, scale, this->blobs_[0]->gpu_data(), mean);
    gpu_scale(channels_, scale, this->blobs_[1]->gpu_data(), variance);
  } else {
    ChannelMeans_gpu(bottom_data, mean);
  }
  SubtractChannelMean<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom_data, mean, channels_, spatial_dim_, top_data);
  CUDA_POST_KERNEL_CHECK;
  if (!use_global_stats_) {
    Dtype* squares = scratch_.mutable_gpu_data();
    gpu_mul(count, top_data, top_data, squares);
    ChannelMeans_gpu(squares, variance);
    // See the CPU body for the running sums.
    Dtype* factor = this->blobs_[2]->mutable_gpu_data();
    gpu_scal(1, moving_average_fraction_, factor);
    gpu_add_scalar(1, Dtype(1), factor);
    gpu_axpby(channels_, Dtype(1), mean, moving_average_fraction_,
              this->blobs_[0]->mutable_gpu_data());
    const int m = count / channels_;
    const Dtype unbiased = m > 1 ? Dtype(m) / (m - 1) : Dtype(1);
    gpu_axpby(channels_, unbiased, variance, moving_average_fraction_,
              this->blobs_[1]->mutable_gpu_data());
  }
  Dtype* std = std_.mutable_gpu_data();
  StdFromVariance<Dtype>
      <<<CREMA_GET_BLOCKS(channels_), CREMA_CUDA_NUM_THREADS>>>(channels_, variance, eps_, std);
  CUDA_POST_KERNEL_CHECK;
  DivideByChannelStd<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, std, channels_, spatial_dim_, top_data, x_norm_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  if (scale_bias_) ApplyScaleBias_gpu(top_data);
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->gpu_diff();
  if (scale_bias_) top_diff = ScaleBiasBackward_gpu(top_diff);
  if (!propagate_down[0]) return;
  const int count = top[0]->count();
  const Dtype* x_norm = x_norm_.gpu_data();
  Dtype* mean_top_diff = mean_top_diff_.mutable_gpu_data();
  Dtype* mean_top_diff_x_norm = mean_top_diff_x_norm_.mutable_gpu_data();
  if (use_global_stats_) {
    gpu_set(channels_, Dtype(0), mean_top_diff);
    gpu_set(channels_, Dtype(0), mean_top_diff_x_norm);
  } else {
    ChannelMeans_gpu(top_diff, mean_top_diff);
    Dtype* products = scratch_.mutable_gpu_data();
    gpu_mul(count, top_diff, x_norm, products);
    ChannelMeans_gpu(products, mean_top_diff_x_norm);
  }
  BatchNormBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top_diff, x_norm, mean_top_diff, mean_top_diff_x_norm, std_.gpu_data(), channels_,
      spatial_dim_, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(BatchNormLayer);

}  // namespace crema
