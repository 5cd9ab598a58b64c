#include "crema/layers/shuffle_channel_layer.hpp"

namespace crema {

// One thread per output value: output [n][col][row][s] is input [n][row][col][s].
template <typename Dtype>
__global__ void TransposeChannels(const int64_t n, const int rows, const int cols,
                                  const int spatial_dim, const Dtype* input, Dtype* output) {
  CUDA_KERNEL_LOOP(index, n) {
    const int64_t s = index % spatial_dim;
    const int64_t channel = (index / spatial_dim) % (rows * cols);
    const int64_t image = index / (static_cast<int64_t>(spatial_dim) * rows * cols);
    const int64_t col = channel / rows;
    const int64_t row = channel % rows;
    output[index] = input[((image * rows + row) * cols + col) * spatial_dim + s];
  }
}

template <typename Dtype>
void ShuffleChannelLayer<Dtype>::Transpose_gpu(const Dtype* input, int rows, Dtype* output) const {
  const int64_t count = static_cast<int64_t>(num_) * channels_ * spatial_dim_;
  if (count == 0) return;
  TransposeChannels<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, rows, channels_ / rows, spatial_dim_, input, output);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ShuffleChannelLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>& top) {
  const bool in_place = top[0] == bottom[0];
  Dtype* output = in_place ? in_place_buffer_.mutable_gpu_data() : top[0]->mutable_gpu_data();
  Transpose_gpu(bottom[0]->gpu_data(), group_, output);
  if (in_place) {
    gpu_memcpy(top[0]->count() * sizeof(Dtype), output, top[0]->mutable_gpu_data());
  }
}

template <typename Dtype>
void ShuffleChannelLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                              const std::vector<bool>& propagate_down,
                                              const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const bool in_place = top[0] == bottom[0];
  Dtype* output = in_place ? in_place_buffer_.mutable_gpu_diff() : bottom[0]->mutable_gpu_diff();
  Transpose_gpu(top[0]->gpu_diff(), channels_ / group_, output);
  if (in_place) {
    gpu_memcpy(bottom[0]->count() * sizeof(Dtype), output, bottom[0]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ShuffleChannelLayer);

}  // namespace crema
