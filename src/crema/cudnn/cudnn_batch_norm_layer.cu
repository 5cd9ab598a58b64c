#include "crema/cudnn/cudnn_batch_norm_layer.hpp"
#include "crema/cudnn/cudnn_body.hpp"

namespace crema {

namespace {

template <typename Dtype>
__global__ void InverseStd(const int n, const Dtype* variance, Dtype eps, Dtype* inverse_std) {
  CUDA_KERNEL_LOOP(index, n) { inverse_std[index] = Dtype(1) / sqrt(variance[index] + eps); }
}

// out = in * factor of the element's channel; in place allowed.
template <typename Dtype>
__global__ void ScaleChannels(const int64_t n, const Dtype* in, const Dtype* factor, int channels,
                              int spatial_dim, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] * factor[(index / spatial_dim) % channels]; }
}

}  // namespace

template <typename Dtype>
void CudnnBatchNormLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>& top) {
  BatchNormLayer<Dtype>::Reshape(bottom, top);
  // Reshape runs before every Forward: the set-up below only when the shape changes.
  if (bottom[0]->shape() == prepared_shape_) return;
  prepared_shape_ = bottom[0]->shape();
  const int64_t per_channel = static_cast<int64_t>(this->num_) * this->spatial_dim_;
  ready_ = FitsCudnn(bottom[0]->count()) && (this->use_global_stats_ || per_channel > 1) &&
           !this->scale_bias_;  // the forks' learned scale and bias: the CUDA body
  if (!ready_) return;
  values_.Set(CudnnType<Dtype>::type, this->num_, this->channels_, this->spatial_dim_, 1);
  per_channel_.Set(CudnnType<Dtype>::type, 1, this->channels_, 1, 1);
  const std::vector<int> shape{this->channels_};
  for (Blob<Dtype>* blob :
       {&unit_, &nothing_, &saved_mean_, &saved_inverse_std_, &unit_diff_, &nothing_diff_}) {
    blob->Reshape(shape);
  }
  cpu_set(this->channels_, Dtype(1), unit_.mutable_cpu_data());
  cpu_set(this->channels_, Dtype(0), nothing_.mutable_cpu_data());
}

template <typename Dtype>
void CudnnBatchNormLayer<Dtype>::NormalizeWithBatchStatistics(const Dtype* x, Dtype* y) {
  // Caffe's sums S and factor F against cuDNN's average r = S / F: the new
  // F' = F * fraction + 1, and S' = fraction * S + batch is F' * r' where r' =
  // (1 - w) r + w batch with w = 1 / F'. With F = 0 there is no average to
  // give: cuDNN gets r = 0 (r' = batch) and the decayed sums are added after.
  const Dtype fraction = this->moving_average_fraction_;
  Dtype* factor = this->blobs_[2]->mutable_cpu_data();
  const Dtype old_factor = factor[0];
  const Dtype new_factor = old_factor * fraction + 1;
  factor[0] = new_factor;
  const int channels = this->channels_;
  Dtype* running[2] = {this->mean_.mutable_gpu_data(), this->variance_.mutable_gpu_data()};
  for (int b = 0; b < 2; ++b) {
    if (old_factor == 0) {
      gpu_set(channels, Dtype(0), running[b]);
    } else {
      gpu_scale(channels, Dtype(1) / old_factor, this->blobs_[b]->gpu_data(), running[b]);
    }
  }
  CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
      CudnnHandle(), CUDNN_BATCHNORM_SPATIAL, CudnnType<Dtype>::one(), CudnnType<Dtype>::zero(),
      values_.get(), x, values_.get(), y, per_channel_.get(), unit_.gpu_data(), nothing_.gpu_data(),
      1.0 / static_cast<double>(new_factor), running[0], running[1],
      static_cast<double>(this->eps_), saved_mean_.mutable_gpu_data(),
      saved_inverse_std_.mutable_gpu_data()));
  for (int b = 0; b < 2; ++b) {
    Dtype* sums = this->blobs_[b]->mutable_gpu_data();
    if (old_factor == 0) {
      gpu_axpby(channels, new_factor, running[b], fraction, sums);
    } else {
      gpu_scale(channels, new_factor, running[b], sums);
    }
  }
}

template <typename Dtype>
void CudnnBatchNormLayer<Dtype>::NormalizeWithGlobalStatistics(const Dtype* x, Dtype* y) {
  const int channels = this->channels_;
  const Dtype scale = this->RunningAverageScale();
  Dtype* mean = this->mean_.mutable_gpu_data();
  Dtype* variance = this->variance_.mutable_gpu_data();
  gpu_scale(channels, scale, this->blobs_[0]->gpu_data(), mean);
  gpu_scale(channels, scale, this->blobs_[1]->gpu_data(), variance);
  CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
      CudnnHandle(), CUDNN_BATCHNORM_SPATIAL, CudnnType<Dtype>::one(), CudnnType<Dtype>::zero(),
      values_.get(), x, values_.get(), y, per_channel_.get(), unit_.gpu_data(), nothing_.gpu_data(),
      mean, variance, static_cast<double>(this->eps_)));
  InverseStd<Dtype><<<CREMA_GET_BLOCKS(channels), CREMA_CUDA_NUM_THREADS>>>(
      channels, variance, this->eps_, saved_inverse_std_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

// cuDNN is given distinct input and output arrays: where the layer runs in
// place, the output goes through a scratch blob.
template <typename Dtype>
void CudnnBatchNormLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>& top) {
  if (!ready_) return BatchNormLayer<Dtype>::Forward_gpu(bottom, top);
  const size_t bytes = sizeof(Dtype) * bottom[0]->count();
  const Dtype* x = bottom[0]->gpu_data();
  if (this->use_global_stats_) {
    const bool in_place = bottom[0] == top[0];
    Dtype* y = in_place ? this->scratch_.mutable_gpu_data() : top[0]->mutable_gpu_data();
    NormalizeWithGlobalStatistics(x, y);
    if (in_place) gpu_memcpy(bytes, y, top[0]->mutable_gpu_data());
    return;
  }
  // The normalised output is kept for Backward: a later layer may change the top.
  Dtype* x_norm = this->x_norm_.mutable_gpu_data();
  NormalizeWithBatchStatistics(x, x_norm);
  gpu_memcpy(bytes, x_norm, top[0]->mutable_gpu_data());
}

// With batch statistics, cuDNN's backward runs on the normalised output as
// its input, with mean 0, 1 / std 1 and scale 1 / std: its
//   dx = scale * inv_std * (dy - mean(dy) - x_hat * mean(dy * x_hat))
// is then the reference's (dy - mean(dy) - y * mean(dy * y)) / std.
template <typename Dtype>
void CudnnBatchNormLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                              const std::vector<bool>& propagate_down,
                                              const std::vector<Blob<Dtype>*>& bottom) {
  if (!ready_) return BatchNormLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  const Dtype* top_diff = top[0]->gpu_diff();
  if (this->use_global_stats_) {
    ScaleChannels<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, top_diff, saved_inverse_std_.gpu_data(), this->channels_, this->spatial_dim_,
        bottom[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
    return;
  }
  const bool in_place = bottom[0] == top[0];
  Dtype* dx = in_place ? this->scratch_.mutable_gpu_diff() : bottom[0]->mutable_gpu_diff();
  const void* one = CudnnType<Dtype>::one();
  const void* zero = CudnnType<Dtype>::zero();
  CUDNN_CHECK(cudnnBatchNormalizationBackward(
      CudnnHandle(), CUDNN_BATCHNORM_SPATIAL, one, zero, one, zero, values_.get(),
      this->x_norm_.gpu_data(), values_.get(), top_diff, values_.get(), dx, per_channel_.get(),
      saved_inverse_std_.gpu_data(), unit_diff_.mutable_gpu_data(),
      nothing_diff_.mutable_gpu_data(), static_cast<double>(this->eps_), nothing_.gpu_data(),
      unit_.gpu_data()));
  if (in_place) gpu_memcpy(sizeof(Dtype) * count, dx, bottom[0]->mutable_gpu_diff());
}

INSTANTIATE_CLASS(CudnnBatchNormLayer);
REGISTER_CUDNN_BODY(BatchNorm);

}  // namespace crema
