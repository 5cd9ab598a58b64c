#include "crema/layers/clip_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void ClipForward(const int64_t n, Dtype min_value, Dtype max_value, const Dtype* in,
                            Dtype* out) {
  // Ordered like std::min(std::max(x, min), max) on the CPU, NaN included.
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype raised = in[index] < min_value ? min_value : in[index];
    out[index] = max_value < raised ? max_value : raised;
  }
}

template <typename Dtype>
void ClipLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->gpu_data();
  if (top[0] == bottom[0]) {
    gpu_memcpy(count * sizeof(Dtype), bottom_data, bottom_copy_.mutable_gpu_data());
  }
  ClipForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, min_, max_, bottom_data, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void ClipBackward(const int64_t n, Dtype min_value, Dtype max_value,
                             const Dtype* top_diff, const Dtype* bottom_data, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype x = bottom_data[index];
    bottom_diff[index] = x >= min_value && x <= max_value ? top_diff[index] : Dtype(0);
  }
}

template <typename Dtype>
void ClipLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype* bottom_data = top[0] == bottom[0] ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  ClipBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, min_, max_, top[0]->gpu_diff(), bottom_data, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ClipLayer);

}  // namespace crema
