#include "crema/layers/tile_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void TileForward(const int64_t n, const Dtype* bottom_data, int inner_count, int tiles,
                            Dtype* top_data) {
  CUDA_KERNEL_LOOP(top_index, n) {
    const int64_t outer = top_index / (static_cast<int64_t>(inner_count) * tiles);
    const int64_t inner = top_index % inner_count;
    top_data[top_index] = bottom_data[outer * inner_count + inner];
  }
}

// One thread per bottom element sums its copies in tile order, like the CPU.
template <typename Dtype>
__global__ void TileBackward(const int64_t n, const Dtype* top_diff, int inner_count, int tiles,
                             Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(bottom_index, n) {
    const int64_t outer = bottom_index / inner_count;
    const int64_t inner = bottom_index % inner_count;
    const Dtype* copies = top_diff + outer * inner_count * tiles + inner;
    Dtype sum = 0;
    for (int t = 0; t < tiles; ++t) sum += copies[static_cast<int64_t>(t) * inner_count];
    bottom_diff[bottom_index] = sum;
  }
}

template <typename Dtype>
void TileLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int count = top[0]->count();
  TileForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), inner_count_, tiles_, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void TileLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  TileBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), inner_count_, tiles_, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(TileLayer);

}  // namespace crema
