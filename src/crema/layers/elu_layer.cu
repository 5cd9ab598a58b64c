#include "crema/layers/elu_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void ELUForward(const int64_t n, const Dtype* in, Dtype* out, Dtype alpha) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype x = in[index];
    out[index] = x > 0 ? x : alpha * expm1(x);
  }
}

template <typename Dtype>
void ELULayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype alpha = this->layer_param_.elu_param().alpha();
  ELUForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data(), alpha);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void ELUBackward(const int64_t n, const Dtype* top_diff, const Dtype* top_data,
                            const Dtype* bottom_data, Dtype* bottom_diff, Dtype alpha) {
  CUDA_KERNEL_LOOP(index, n) {
    bottom_diff[index] =
        top_diff[index] * (bottom_data[index] > 0 ? Dtype(1) : top_data[index] + alpha);
  }
}

template <typename Dtype>
void ELULayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype alpha = this->layer_param_.elu_param().alpha();
  ELUBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), top[0]->gpu_data(), bottom[0]->gpu_data(),
      bottom[0]->mutable_gpu_diff(), alpha);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ELULayer);

}  // namespace crema
