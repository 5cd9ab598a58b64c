#include "crema/layers/fixed_neuron_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void FixedNeuronForward(const int64_t n, const Dtype* in, Dtype step, Dtype lower,
                                   Dtype upper, bool truncate, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    if (truncate) {
      out[index] = trunc(in[index] / step) * step;
    } else {
      const Dtype rounded = floor(in[index] / step + Dtype(0.5)) * step;
      out[index] = rounded < lower ? lower : (rounded > upper ? upper : rounded);
    }
  }
}

template <typename Dtype>
void FixedNeuronLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  if (!enabled_) {
    if (bottom[0] != top[0]) {
      gpu_memcpy(count * sizeof(Dtype), bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
    }
    return;
  }
  Dtype step, lower, upper;
  ReadPosition(&step, &lower, &upper);
  FixedNeuronForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), step, lower, upper, truncate_, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void FixedNeuronLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0] || top[0] == bottom[0]) return;
  gpu_memcpy(top[0]->count() * sizeof(Dtype), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

INSTANTIATE_LAYER_GPU_FUNCS(FixedNeuronLayer);

}  // namespace crema
