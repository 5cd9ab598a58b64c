#include "crema/layers/bnll_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void BNLLForward(const int64_t n, const Dtype* in, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype x = in[index];
    out[index] = x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
  }
}

template <typename Dtype>
void BNLLLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  BNLLForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void BNLLBackward(const int64_t n, const Dtype* top_diff, const Dtype* top_data,
                             Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) { bottom_diff[index] = -top_diff[index] * expm1(-top_data[index]); }
}

template <typename Dtype>
void BNLLLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  BNLLBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), top[0]->gpu_data(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(BNLLLayer);

}  // namespace crema
