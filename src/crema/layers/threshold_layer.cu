#include "crema/layers/threshold_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void ThresholdForward(const int64_t n, Dtype threshold, const Dtype* in, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] > threshold ? Dtype(1) : Dtype(0); }
}

template <typename Dtype>
void ThresholdLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  ThresholdForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, threshold_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ThresholdLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  gpu_set(bottom[0]->count(), Dtype(0), bottom[0]->mutable_gpu_diff());
}

INSTANTIATE_LAYER_GPU_FUNCS(ThresholdLayer);

}  // namespace crema
