#include "crema/layers/log_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void LogForward(const int64_t n, Dtype base_scale, Dtype input_scale, Dtype input_shift,
                           const Dtype* in, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    out[index] = base_scale * log(input_shift + input_scale * in[index]);
  }
}

template <typename Dtype>
void LogLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->gpu_data();
  if (top[0] == bottom[0]) {
    gpu_memcpy(count * sizeof(Dtype), bottom_data, bottom_copy_.mutable_gpu_data());
  }
  LogForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, base_scale_, input_scale_, input_shift_, bottom_data, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void LogBackward(const int64_t n, Dtype base_scale, Dtype input_scale, Dtype input_shift,
                            const Dtype* top_diff, const Dtype* bottom_data, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    bottom_diff[index] = top_diff[index] * base_scale * input_scale /
                         (input_shift + input_scale * bottom_data[index]);
  }
}

template <typename Dtype>
void LogLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype* bottom_data = top[0] == bottom[0] ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  LogBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, base_scale_, input_scale_, input_shift_, top[0]->gpu_diff(), bottom_data,
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(LogLayer);

}  // namespace crema
