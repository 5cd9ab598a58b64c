#include "crema/layers/slice_layer.hpp"

namespace crema {

// Moves one top's elements from (to_top) or back to their place in the
// bottom. Each of the top's outer blocks (block elements) sits inside a
// bottom block of bottom_block elements, offset elements from its start.
template <typename Dtype>
__global__ void SliceCopy(const int64_t n, bool to_top, int64_t block, int64_t bottom_block,
                          int64_t offset, const Dtype* from, Dtype* to) {
  CUDA_KERNEL_LOOP(top_index, n) {
    const int64_t bottom_index = (top_index / block) * bottom_block + offset + top_index % block;
    if (to_top) {
      to[top_index] = from[bottom_index];
    } else {
      to[bottom_index] = from[top_index];
    }
  }
}

template <typename Dtype>
void SliceLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  if (top.size() == 1) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  const int64_t bottom_block = static_cast<int64_t>(bottom[0]->shape(slice_axis_)) * inner_count_;
  int64_t offset = 0;
  for (Blob<Dtype>* blob : top) {
    const int64_t block = static_cast<int64_t>(blob->shape(slice_axis_)) * inner_count_;
    const int count = blob->count();
    SliceCopy<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, true, block, bottom_block, offset, bottom_data, blob->mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
    offset += block;
  }
}

template <typename Dtype>
void SliceLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0] || top.size() == 1) return;
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  const int64_t bottom_block = static_cast<int64_t>(bottom[0]->shape(slice_axis_)) * inner_count_;
  int64_t offset = 0;
  for (Blob<Dtype>* blob : top) {
    const int64_t block = static_cast<int64_t>(blob->shape(slice_axis_)) * inner_count_;
    const int count = blob->count();
    SliceCopy<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, false, block, bottom_block, offset, blob->gpu_diff(), bottom_diff);
    CUDA_POST_KERNEL_CHECK;
    offset += block;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(SliceLayer);

}  // namespace crema
