#include "crema/layers/tanh_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void TanHForward(const int64_t n, const Dtype* in, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = tanh(in[index]); }
}

template <typename Dtype>
void TanHLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  TanHForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void TanHBackward(const int64_t n, const Dtype* top_diff, const Dtype* top_data,
                             Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype y = top_data[index];
    bottom_diff[index] = top_diff[index] * (Dtype(1) - y * y);
  }
}

template <typename Dtype>
void TanHLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  TanHBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), top[0]->gpu_data(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(TanHLayer);

}  // namespace crema
