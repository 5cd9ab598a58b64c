#include "crema/layers/softmax_layer.hpp"

namespace crema {

// Kernels over positions (one thread per (outer, inner) pair) walk that
// position's channels; kernels over elements recover their position from the
// flat index. No atomics, so results are deterministic.

template <typename Dtype>
__global__ void SoftmaxChannelMax(const int64_t num_positions, const int channels,
                                  const int inner_num, const Dtype* in, Dtype* channel_max) {
  CUDA_KERNEL_LOOP(position, num_positions) {
    const int64_t outer = position / inner_num;
    const int64_t inner = position % inner_num;
    const Dtype* first = in + outer * channels * inner_num + inner;
    Dtype max_value = first[0];
    for (int c = 1; c < channels; ++c) {
      const Dtype value = first[c * inner_num];
      max_value = value > max_value ? value : max_value;
    }
    channel_max[position] = max_value;
  }
}

template <typename Dtype>
__global__ void SoftmaxShiftedExp(const int64_t count, const int channels, const int inner_num,
                                  const Dtype* in, const Dtype* channel_max, Dtype* out) {
  CUDA_KERNEL_LOOP(index, count) {
    const int64_t outer = index / (static_cast<int64_t>(channels) * inner_num);
    const int64_t inner = index % inner_num;
    out[index] = exp(in[index] - channel_max[outer * inner_num + inner]);
  }
}

template <typename Dtype>
__global__ void SoftmaxChannelSum(const int64_t num_positions, const int channels,
                                  const int inner_num, const Dtype* in, Dtype* channel_sum) {
  CUDA_KERNEL_LOOP(position, num_positions) {
    const int64_t outer = position / inner_num;
    const int64_t inner = position % inner_num;
    const Dtype* first = in + outer * channels * inner_num + inner;
    Dtype sum = 0;
    for (int c = 0; c < channels; ++c) sum += first[c * inner_num];
    channel_sum[position] = sum;
  }
}

template <typename Dtype>
__global__ void SoftmaxDivide(const int64_t count, const int channels, const int inner_num,
                              const Dtype* channel_sum, Dtype* out) {
  CUDA_KERNEL_LOOP(index, count) {
    const int64_t outer = index / (static_cast<int64_t>(channels) * inner_num);
    const int64_t inner = index % inner_num;
    out[index] /= channel_sum[outer * inner_num + inner];
  }
}

template <typename Dtype>
void SoftmaxLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  const int num_positions = outer_num_ * inner_num_;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  Dtype* scratch = per_position_.mutable_gpu_data();
  SoftmaxChannelMax<Dtype><<<CREMA_GET_BLOCKS(num_positions), CREMA_CUDA_NUM_THREADS>>>(
      num_positions, channels_, inner_num_, bottom_data, scratch);
  CUDA_POST_KERNEL_CHECK;
  SoftmaxShiftedExp<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, channels_, inner_num_, bottom_data, scratch, top_data);
  CUDA_POST_KERNEL_CHECK;
  SoftmaxChannelSum<Dtype><<<CREMA_GET_BLOCKS(num_positions), CREMA_CUDA_NUM_THREADS>>>(
      num_positions, channels_, inner_num_, top_data, scratch);
  CUDA_POST_KERNEL_CHECK;
  SoftmaxDivide<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, channels_, inner_num_, scratch, top_data);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void SoftmaxChannelDot(const int64_t num_positions, const int channels,
                                  const int inner_num, const Dtype* a, const Dtype* b,
                                  Dtype* channel_dot) {
  CUDA_KERNEL_LOOP(position, num_positions) {
    const int64_t outer = position / inner_num;
    const int64_t inner = position % inner_num;
    const int64_t first = outer * channels * inner_num + inner;
    Dtype dot = 0;
    for (int c = 0; c < channels; ++c) {
      dot += a[first + c * inner_num] * b[first + c * inner_num];
    }
    channel_dot[position] = dot;
  }
}

template <typename Dtype>
__global__ void SoftmaxBackwardKernel(const int64_t count, const int channels, const int inner_num,
                                      const Dtype* top_data, const Dtype* top_diff,
                                      const Dtype* channel_dot, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, count) {
    const int64_t outer = index / (static_cast<int64_t>(channels) * inner_num);
    const int64_t inner = index % inner_num;
    bottom_diff[index] =
        top_data[index] * (top_diff[index] - channel_dot[outer * inner_num + inner]);
  }
}

template <typename Dtype>
void SoftmaxLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = top[0]->count();
  const int num_positions = outer_num_ * inner_num_;
  const Dtype* top_data = top[0]->gpu_data();
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* scratch = per_position_.mutable_gpu_data();
  SoftmaxChannelDot<Dtype><<<CREMA_GET_BLOCKS(num_positions), CREMA_CUDA_NUM_THREADS>>>(
      num_positions, channels_, inner_num_, top_diff, top_data, scratch);
  CUDA_POST_KERNEL_CHECK;
  SoftmaxBackwardKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, channels_, inner_num_, top_data, top_diff, scratch, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(SoftmaxLayer);

}  // namespace crema
