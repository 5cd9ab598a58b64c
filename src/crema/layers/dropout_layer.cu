#include "crema/layers/dropout_layer.hpp"

namespace crema {

// Multiplies by the 0/1 keep flag (rather than selecting 0) so a dropped NaN
// stays NaN, as on the CPU.
template <typename Dtype>
__global__ void DropoutApplyMask(const int64_t n, const Dtype* in, const unsigned int* draws,
                                 unsigned int threshold, Dtype scale, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] * Dtype(draws[index] >= threshold) * scale; }
}

template <typename Dtype>
void DropoutLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  const int count = bottom[0]->count();
  if (!drops_) {
    gpu_scale(count, test_scale_, bottom_data, top_data);
    return;
  }
  unsigned int* draws = static_cast<unsigned int*>(mask_->mutable_gpu_data());
  gpu_rng_uniform(count, draws);
  DropoutApplyMask<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom_data, draws, uint_threshold_, train_scale_, top_data);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void DropoutLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  const int count = bottom[0]->count();
  if (!drops_) {
    gpu_scale(count, test_scale_, top_diff, bottom_diff);
    return;
  }
  const unsigned int* draws = static_cast<const unsigned int*>(mask_->gpu_data());
  DropoutApplyMask<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top_diff, draws, uint_threshold_, train_scale_, bottom_diff);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(DropoutLayer);

}  // namespace crema
