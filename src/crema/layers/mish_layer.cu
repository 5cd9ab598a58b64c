#include "crema/layers/mish_layer.hpp"

namespace crema {

template <typename Dtype>
__device__ Dtype MishSoftplus(Dtype x) {
  if (x > Dtype(20)) return x;
  if (x < Dtype(-20)) return exp(x);
  return log1p(exp(x));
}

template <typename Dtype>
__global__ void MishForward(const int64_t n, const Dtype* in, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] * tanh(MishSoftplus(in[index])); }
}

template <typename Dtype>
__global__ void MishBackward(const int64_t n, const Dtype* top_diff, const Dtype* in,
                             Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype x = in[index];
    const Dtype t = tanh(MishSoftplus(x));
    const Dtype sigmoid = Dtype(1) / (Dtype(1) + exp(-x));
    bottom_diff[index] = top_diff[index] * (t + x * (Dtype(1) - t * t) * sigmoid);
  }
}

template <typename Dtype>
void MishLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  if (top[0] == bottom[0]) input_copy_.CopyFrom(*bottom[0], false, true);
  const int64_t count = bottom[0]->count();
  MishForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void MishLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* x = top[0] == bottom[0] ? input_copy_.gpu_data() : bottom[0]->gpu_data();
  const int64_t count = bottom[0]->count();
  MishBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), x, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(MishLayer);

}  // namespace crema
