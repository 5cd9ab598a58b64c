#include "crema/layers/exp_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void ExpForward(const int64_t n, Dtype inner_scale, Dtype outer_scale, const Dtype* in,
                           Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = outer_scale * exp(inner_scale * in[index]); }
}

template <typename Dtype>
void ExpLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  ExpForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, inner_scale_, outer_scale_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ExpLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  gpu_mul(count, top[0]->gpu_diff(), top[0]->gpu_data(), bottom_diff);
  gpu_scal(count, inner_scale_, bottom_diff);
}

INSTANTIATE_LAYER_GPU_FUNCS(ExpLayer);

}  // namespace crema
