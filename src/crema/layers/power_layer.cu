#include "crema/layers/power_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void PowerForward(const int64_t n, Dtype power, Dtype scale, Dtype shift,
                             const Dtype* in, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = pow(shift + scale * in[index], power); }
}

template <typename Dtype>
void PowerLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  Dtype* top_data = top[0]->mutable_gpu_data();
  if (derivative_scale_ == 0) {
    gpu_set(count, power_ == 0 ? Dtype(1) : Dtype(std::pow(shift_, power_)), top_data);
    return;
  }
  const Dtype* bottom_data = bottom[0]->gpu_data();
  if (top[0] == bottom[0] && DerivativeNeedsInput()) {
    gpu_memcpy(count * sizeof(Dtype), bottom_data, bottom_copy_.mutable_gpu_data());
  }
  PowerForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, power_, scale_, shift_, bottom_data, top_data);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void PowerBackward(const int64_t n, Dtype power, Dtype scale, Dtype shift,
                              Dtype derivative_scale, const Dtype* top_diff,
                              const Dtype* bottom_data, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype base = shift + scale * bottom_data[index];
    bottom_diff[index] = top_diff[index] * derivative_scale * pow(base, power - 1);
  }
}

template <typename Dtype>
void PowerLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  if (!DerivativeNeedsInput()) {
    gpu_scale(count, derivative_scale_, top_diff, bottom_diff);
    return;
  }
  const Dtype* bottom_data = top[0] == bottom[0] ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  PowerBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, power_, scale_, shift_, derivative_scale_, top_diff, bottom_data, bottom_diff);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(PowerLayer);

}  // namespace crema
