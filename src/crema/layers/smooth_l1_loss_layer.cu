#include "crema/layers/smooth_l1_loss_layer.hpp"

namespace crema {

namespace {

// Per value: errors = w_out * f(x) and slope = w_out * f'(x) * w_in for
// x = w_in * (a - b); a null weight is 1.
template <typename Dtype>
__global__ void SmoothL1Forward(int64_t count, const Dtype* a, const Dtype* b, const Dtype* w_in,
                                const Dtype* w_out, Dtype sigma2, Dtype* errors, Dtype* slope) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype in = w_in ? w_in[i] : Dtype(1), out = w_out ? w_out[i] : Dtype(1);
    const Dtype x = in * (a[i] - b[i]);
    const Dtype knee = 1 / sigma2;
    const bool quadratic = fabs(x) < knee;
    errors[i] = out * (quadratic ? Dtype(0.5) * sigma2 * x * x : fabs(x) - Dtype(0.5) * knee);
    const Dtype f_prime = quadratic ? sigma2 * x : (x > 0 ? Dtype(1) : (x < 0 ? Dtype(-1) : 0));
    slope[i] = out * f_prime * in;
  }
}

// Per item and position: the sum over the channels of errors.
template <typename Dtype>
__global__ void SumOverChannels(int64_t positions, int channels, int inner, const Dtype* errors,
                                Dtype* sums) {
  CUDA_KERNEL_LOOP(index, positions) {
    const int64_t n = index / inner, s = index % inner;
    Dtype sum = 0;
    for (int c = 0; c < channels; ++c) sum += errors[(n * channels + c) * inner + s];
    sums[index] = sum;
  }
}

}  // namespace

template <typename Dtype>
void SmoothL1LossLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  SmoothL1Forward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), bottom[1]->gpu_data(),
      inside(bottom) ? inside(bottom)->gpu_data() : nullptr,
      outside(bottom) ? outside(bottom)->gpu_data() : nullptr, sigma2_, errors_.mutable_gpu_data(),
      slope_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  Dtype loss = 0;
  gpu_dot(count, errors_.gpu_data(), ones_.gpu_data(), &loss);
  top[0]->mutable_cpu_data()[0] = loss / LossNormalizer(*bottom[0]);
  if (top.size() > 1) {
    const int positions = top[1]->count();
    SumOverChannels<Dtype><<<CREMA_GET_BLOCKS(positions), CREMA_CUDA_NUM_THREADS>>>(
        positions, bottom[0]->shape(1), bottom[0]->count(2), errors_.gpu_data(),
        top[1]->mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
  }
}

template <typename Dtype>
void SmoothL1LossLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  RequireNoWeightGradient(propagate_down);
  for (int i = 0; i < 2; ++i) {
    if (!propagate_down[i]) continue;
    const Dtype scale = (i == 0 ? 1 : -1) * top[0]->cpu_diff()[0] / LossNormalizer(*bottom[0]);
    gpu_scale(bottom[i]->count(), scale, slope_.gpu_data(), bottom[i]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(SmoothL1LossLayer);

}  // namespace crema
