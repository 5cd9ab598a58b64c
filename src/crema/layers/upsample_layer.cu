#include "crema/layers/upsample_layer.hpp"

namespace crema {

// One thread per bottom element. A bad mask value writes nothing and raises
// the flag (every writer stores the same 1, so the race is harmless); where
// two values share an index, which one lands is unspecified, as on the fork.
template <typename Dtype>
__global__ void UpsampleForward(const int64_t n, int in_plane, int out_plane, const Dtype* data,
                                const Dtype* mask, Dtype* top_data, Dtype* bad_mask_flag) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype index = mask[i];
    if (index >= 0 && index < out_plane && floor(index) == index) {
      top_data[(i / in_plane) * out_plane + static_cast<int>(index)] = data[i];
    } else {
      bad_mask_flag[0] = 1;
    }
  }
}

template <typename Dtype>
void UpsampleLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  gpu_set(top[0]->count(), Dtype(0), top[0]->mutable_gpu_data());
  gpu_set(1, Dtype(0), bad_mask_flag_.mutable_gpu_data());
  const int64_t count = bottom[0]->count();
  UpsampleForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, in_plane_, out_plane_, bottom[0]->gpu_data(), bottom[1]->gpu_data(),
      top[0]->mutable_gpu_data(), bad_mask_flag_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  // The host scan runs only to name the bad value.
  if (bad_mask_flag_.cpu_data()[0] != 0) CheckMask(*bottom[1]);
}

template <typename Dtype>
__global__ void UpsampleBackward(const int64_t n, int in_plane, int out_plane,
                                 const Dtype* top_diff, const Dtype* mask, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, n) {
    bottom_diff[i] = top_diff[(i / in_plane) * out_plane + static_cast<int>(mask[i])];
  }
}

template <typename Dtype>
void UpsampleLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  UpsampleBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, in_plane_, out_plane_, top[0]->gpu_diff(), bottom[1]->gpu_data(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(UpsampleLayer);

}  // namespace crema
