#include "crema/layers/swish_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void SwishForward(const int64_t n, Dtype beta, const Dtype* in, Dtype* sigmoid_out,
                             Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype x = in[index];
    const Dtype s = Dtype(1) / (Dtype(1) + exp(-beta * x));
    sigmoid_out[index] = s;
    out[index] = x * s;
  }
}

template <typename Dtype>
void SwishLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  SwishForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, beta_, bottom[0]->gpu_data(), sigmoid_output_.mutable_gpu_data(),
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void SwishBackward(const int64_t n, Dtype beta, const Dtype* top_diff,
                              const Dtype* top_data, const Dtype* sigmoid_data,
                              Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype beta_y = beta * top_data[index];
    bottom_diff[index] = top_diff[index] * (beta_y + sigmoid_data[index] * (Dtype(1) - beta_y));
  }
}

template <typename Dtype>
void SwishLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  SwishBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, beta_, top[0]->gpu_diff(), top[0]->gpu_data(), sigmoid_output_.gpu_data(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(SwishLayer);

}  // namespace crema
