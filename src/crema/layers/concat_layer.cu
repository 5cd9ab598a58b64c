#include "crema/layers/concat_layer.hpp"

namespace crema {

// Moves one bottom's elements to (to_top) or from its place in the top. Each
// of the outer blocks of the bottom (block elements) sits inside a top block
// of top_block elements, offset elements from its start.
template <typename Dtype>
__global__ void ConcatCopy(const int64_t n, bool to_top, int64_t block, int64_t top_block,
                           int64_t offset, const Dtype* from, Dtype* to) {
  CUDA_KERNEL_LOOP(bottom_index, n) {
    const int64_t top_index = (bottom_index / block) * top_block + offset + bottom_index % block;
    if (to_top) {
      to[top_index] = from[bottom_index];
    } else {
      to[bottom_index] = from[top_index];
    }
  }
}

template <typename Dtype>
void ConcatLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  if (bottom.size() == 1) return;
  Dtype* top_data = top[0]->mutable_gpu_data();
  const int64_t top_block = static_cast<int64_t>(top[0]->shape(concat_axis_)) * inner_count_;
  int64_t offset = 0;
  for (Blob<Dtype>* blob : bottom) {
    const int64_t block = static_cast<int64_t>(blob->shape(concat_axis_)) * inner_count_;
    const int count = blob->count();
    ConcatCopy<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, true, block, top_block, offset, blob->gpu_data(), top_data);
    CUDA_POST_KERNEL_CHECK;
    offset += block;
  }
}

template <typename Dtype>
void ConcatLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  if (bottom.size() == 1) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  const int64_t top_block = static_cast<int64_t>(top[0]->shape(concat_axis_)) * inner_count_;
  int64_t offset = 0;
  for (size_t i = 0; i < bottom.size(); ++i) {
    const int64_t block = static_cast<int64_t>(bottom[i]->shape(concat_axis_)) * inner_count_;
    const int count = bottom[i]->count();
    if (propagate_down[i]) {
      ConcatCopy<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
          count, false, block, top_block, offset, top_diff, bottom[i]->mutable_gpu_diff());
      CUDA_POST_KERNEL_CHECK;
    }
    offset += block;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ConcatLayer);

}  // namespace crema
