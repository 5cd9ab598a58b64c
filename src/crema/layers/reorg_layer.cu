#include "crema/layers/reorg_layer.hpp"

namespace crema {

// See the CPU body: one thread per bottom index a; gather writes to[a],
// scatter to[b], each b met once (the map is a permutation).
template <typename Dtype>
__global__ void ReorgKernel(const int64_t count, const Dtype* from, int channels, int height,
                            int width, int stride, bool gather, Dtype* to) {
  CUDA_KERNEL_LOOP(a, count) {
    const int w = static_cast<int>(a % width);
    const int h = static_cast<int>((a / width) % height);
    const int c = static_cast<int>((a / (static_cast<int64_t>(width) * height)) % channels);
    const int64_t n = a / (static_cast<int64_t>(width) * height * channels);
    const int out_channels = channels / (stride * stride);
    const int c2 = c % out_channels, offset = c / out_channels;
    const int w2 = w * stride + offset % stride, h2 = h * stride + offset / stride;
    const int64_t b =
        ((n * out_channels + c2) * height * stride + h2) * static_cast<int64_t>(width) * stride +
        w2;
    if (gather) {
      to[a] = from[b];
    } else {
      to[b] = from[a];
    }
  }
}

template <typename Dtype>
void ReorgLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int64_t count = bottom[0]->count();
  ReorgKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), channels_, height_, width_, stride_, !reverse_,
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ReorgLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  ReorgKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), channels_, height_, width_, stride_, reverse_,
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ReorgLayer);

}  // namespace crema
