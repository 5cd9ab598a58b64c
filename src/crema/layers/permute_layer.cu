#include "crema/layers/permute_layer.hpp"

namespace crema {

// forward: top[t] = bottom[b(t)]; backward: bottom_diff[b(t)] = top_diff[t].
// b is a bijection, so no two threads write the same element.
template <typename Dtype>
__global__ void PermuteKernel(const int64_t n, const PermuteIndexing indexing, const bool forward,
                              const Dtype* from, Dtype* to) {
  CUDA_KERNEL_LOOP(t, n) {
    const int64_t b = PermutedBottomIndex(indexing, t);
    if (forward) {
      to[t] = from[b];
    } else {
      to[b] = from[t];
    }
  }
}

template <typename Dtype>
void PermuteLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const int count = top[0]->count();
  if (!need_permute_) {
    gpu_memcpy(count * sizeof(Dtype), bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
    return;
  }
  PermuteKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, indexing_, true, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void PermuteLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = top[0]->count();
  if (!need_permute_) {
    gpu_memcpy(count * sizeof(Dtype), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
    return;
  }
  PermuteKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, indexing_, false, top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(PermuteLayer);

}  // namespace crema
