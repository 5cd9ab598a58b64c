#include "crema/layers/bn_layer.hpp"

namespace crema {

namespace {

constexpr int kSumThreads = 256;  // a power of two, for the tree reduction

}  // namespace

// One block per channel: each thread sums a strided share of the channel's
// values, then the block adds the shares in a fixed tree (so the result does
// not depend on scheduling).
template <typename Dtype>
__global__ void BNChannelSums(int num, int channels, int spatial_dim, const Dtype* a,
                              const Dtype* b, Dtype scale, Dtype* sums) {
  __shared__ Dtype shares[kSumThreads];
  const int64_t values = static_cast<int64_t>(num) * spatial_dim;
  for (int c = blockIdx.x; c < channels; c += gridDim.x) {
    Dtype sum = 0;
    for (int64_t v = threadIdx.x; v < values; v += blockDim.x) {
      const int64_t i = (v / spatial_dim * channels + c) * spatial_dim + v % spatial_dim;
      sum += b ? a[i] * b[i] : a[i];
    }
    shares[threadIdx.x] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) shares[threadIdx.x] += shares[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) sums[c] = shares[0] * scale;
    __syncthreads();
  }
}

template <typename Dtype>
void BNLayer<Dtype>::ChannelSums_gpu(const Dtype* a, const Dtype* b, Dtype scale,
                                     Dtype* sums) const {
  const int blocks = channels_ < 65535 ? channels_ : 65535;
  BNChannelSums<Dtype><<<blocks, kSumThreads>>>(num_, channels_, spatial_dim_, a, b, scale, sums);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void BNCentre(const int64_t n, int channels, int spatial_dim, const Dtype* x,
                         const Dtype* mean, Dtype* x_norm) {
  CUDA_KERNEL_LOOP(i, n) { x_norm[i] = x[i] - mean[i / spatial_dim % channels]; }
}

template <typename Dtype>
void BNLayer<Dtype>::Centre_gpu(const Dtype* bottom_data) {
  const int64_t count = x_norm_.count();
  BNCentre<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, channels_, spatial_dim_, bottom_data, mean_.gpu_data(), x_norm_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void BNInvStd(int channels, const Dtype* variance, Dtype eps, Dtype* inv_std) {
  CUDA_KERNEL_LOOP(c, channels) { inv_std[c] = 1 / sqrt(variance[c] + eps); }
}

template <typename Dtype>
void BNLayer<Dtype>::BatchStatistics_gpu(const Dtype* bottom_data) {
  const Dtype per_value = Dtype(1) / ValuesPerChannel();
  ChannelSums_gpu(bottom_data, nullptr, per_value, mean_.mutable_gpu_data());
  Centre_gpu(bottom_data);
  ChannelSums_gpu(x_norm_.gpu_data(), x_norm_.gpu_data(), per_value, variance_.mutable_gpu_data());
  BNInvStd<Dtype><<<CREMA_GET_BLOCKS(channels_), CREMA_CUDA_NUM_THREADS>>>(
      channels_, variance_.gpu_data(), eps_, inv_std_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  if (segnet_) return;
  gpu_axpby(channels_, 1 - momentum_, mean_.gpu_data(), momentum_,
            this->blobs_[2]->mutable_gpu_data());
  gpu_axpby(channels_, 1 - momentum_, variance_.gpu_data(), momentum_,
            this->blobs_[3]->mutable_gpu_data());
}

template <typename Dtype>
void BNLayer<Dtype>::FixedStatistics_gpu() {
  if (segnet_) {
    gpu_set(channels_, Dtype(0), mean_.mutable_gpu_data());
    gpu_set(channels_, Dtype(1), inv_std_.mutable_gpu_data());
    return;
  }
  gpu_memcpy(channels_ * sizeof(Dtype), this->blobs_[2]->gpu_data(), mean_.mutable_gpu_data());
  BNInvStd<Dtype><<<CREMA_GET_BLOCKS(channels_), CREMA_CUDA_NUM_THREADS>>>(
      channels_, this->blobs_[3]->gpu_data(), eps_, inv_std_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void BNScaleAndShift(const int64_t n, int channels, int spatial_dim,
                                const Dtype* inv_std, const Dtype* a, const Dtype* b, Dtype* x_norm,
                                Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) {
    const int c = i / spatial_dim % channels;
    const Dtype normalized = x_norm[i] * inv_std[c];
    x_norm[i] = normalized;
    y[i] = a[c] * normalized + b[c];
  }
}

template <typename Dtype>
void BNLayer<Dtype>::ScaleAndShift_gpu(Dtype* top_data) {
  const int64_t count = x_norm_.count();
  BNScaleAndShift<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, channels_, spatial_dim_, inv_std_.gpu_data(), this->blobs_[0]->gpu_data(),
      this->blobs_[1]->gpu_data(), x_norm_.mutable_gpu_data(), top_data);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BNLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->gpu_data();
  if (batch_statistics_) {
    BatchStatistics_gpu(bottom_data);
  } else {
    FixedStatistics_gpu();
    Centre_gpu(bottom_data);
  }
  ScaleAndShift_gpu(top[0]->mutable_gpu_data());
}

// The rule of Backward_cpu; batch is 1 with batch statistics, else 0.
template <typename Dtype>
__global__ void BNBackward(const int64_t n, int channels, int spatial_dim, Dtype batch,
                           const Dtype* a, const Dtype* inv_std, const Dtype* mean_dy,
                           const Dtype* mean_dy_x, const Dtype* x_norm, const Dtype* top_diff,
                           Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, n) {
    const int c = i / spatial_dim % channels;
    bottom_diff[i] =
        a[c] * inv_std[c] * (top_diff[i] - batch * (mean_dy[c] + x_norm[i] * mean_dy_x[c]));
  }
}

template <typename Dtype>
void BNLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->gpu_diff();
  const Dtype values = ValuesPerChannel();
  ChannelSums_gpu(top_diff, nullptr, 1 / values, mean_top_diff_.mutable_gpu_data());
  ChannelSums_gpu(top_diff, x_norm_.gpu_data(), 1 / values,
                  mean_top_diff_x_norm_.mutable_gpu_data());
  if (this->param_propagate_down(0)) {
    gpu_axpy(channels_, values, mean_top_diff_x_norm_.gpu_data(),
             this->blobs_[0]->mutable_gpu_diff());
  }
  if (this->param_propagate_down(1)) {
    gpu_axpy(channels_, values, mean_top_diff_.gpu_data(), this->blobs_[1]->mutable_gpu_diff());
  }
  if (!propagate_down[0]) return;
  const int64_t count = x_norm_.count();
  BNBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, channels_, spatial_dim_, batch_statistics_ ? Dtype(1) : Dtype(0),
      this->blobs_[0]->gpu_data(), inv_std_.gpu_data(), mean_top_diff_.gpu_data(),
      mean_top_diff_x_norm_.gpu_data(), x_norm_.gpu_data(), top_diff,
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(BNLayer);

}  // namespace crema
