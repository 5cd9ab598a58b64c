#include "crema/layers/relu6_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void ReLU6Forward(const int64_t n, const Dtype* in, Dtype* out) {
  // Ordered like std::min(std::max(x, 0), 6) on the CPU, NaN included.
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype raised = in[index] < Dtype(0) ? Dtype(0) : in[index];
    out[index] = Dtype(6) < raised ? Dtype(6) : raised;
  }
}

template <typename Dtype>
void ReLU6Layer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  ReLU6Forward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void ReLU6Backward(const int64_t n, const Dtype* top_diff, const Dtype* top_data,
                              Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype y = top_data[index];
    bottom_diff[index] = y > Dtype(0) && y < Dtype(6) ? top_diff[index] : Dtype(0);
  }
}

template <typename Dtype>
void ReLU6Layer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  ReLU6Backward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), top[0]->gpu_data(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ReLU6Layer);

}  // namespace crema
