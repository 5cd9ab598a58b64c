#include "crema/layers/nearest_upsample_layer.hpp"

namespace crema {

// One thread per top element.
template <typename Dtype>
__global__ void NearestUpsampleForward(const int64_t n, int height, int width, int scale,
                                       const Dtype* in, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    const int out_width = width * scale, out_height = height * scale;
    const int w = static_cast<int>(index % out_width);
    const int h = static_cast<int>((index / out_width) % out_height);
    const int64_t plane = index / (static_cast<int64_t>(out_width) * out_height);
    out[index] = in[(plane * height + h / scale) * width + w / scale];
  }
}

// One thread per bottom element, summing its block in a fixed order.
template <typename Dtype>
__global__ void NearestUpsampleBackward(const int64_t n, int height, int width, int scale,
                                        const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int w = static_cast<int>(index % width);
    const int h = static_cast<int>((index / width) % height);
    const int64_t plane = index / (static_cast<int64_t>(width) * height);
    const int out_width = width * scale;
    Dtype sum = 0;
    for (int i = 0; i < scale; ++i) {
      const Dtype* block =
          top_diff + (plane * height * scale + h * scale + i) * out_width + w * scale;
      for (int j = 0; j < scale; ++j) sum += block[j];
    }
    bottom_diff[index] = sum;
  }
}

template <typename Dtype>
void NearestUpsampleLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  const int64_t count = top[0]->count();
  NearestUpsampleForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, height_, width_, scale_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void NearestUpsampleLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  NearestUpsampleBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, height_, width_, scale_, top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(NearestUpsampleLayer);

}  // namespace crema
