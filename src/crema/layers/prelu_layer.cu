#include "crema/layers/prelu_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void PReLUForward(const int64_t n, int channels, int inner_size, bool channel_shared,
                             const Dtype* in, const Dtype* slope, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    const int c = channel_shared ? 0 : static_cast<int>((index / inner_size) % channels);
    const Dtype x = in[index];
    out[index] = x > 0 ? x : slope[c] * x;
  }
}

template <typename Dtype>
void PReLULayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->gpu_data();
  if (top[0] == bottom[0]) {
    gpu_memcpy(count * sizeof(Dtype), bottom_data, bottom_copy_.mutable_gpu_data());
  }
  PReLUForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->shape(1), bottom[0]->count(2), channel_shared_, bottom_data,
      this->blobs_[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

// Each element's contribution to its slope's gradient: dy/dslope = x where
// x <= 0.
template <typename Dtype>
__global__ void PReLUSlopeTerms(const int64_t n, const Dtype* top_diff, const Dtype* bottom_data,
                                Dtype* terms) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype x = bottom_data[index];
    terms[index] = x <= 0 ? top_diff[index] * x : Dtype(0);
  }
}

template <typename Dtype>
__global__ void PReLUBackward(const int64_t n, int channels, int inner_size, bool channel_shared,
                              const Dtype* top_diff, const Dtype* bottom_data, const Dtype* slope,
                              Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int c = channel_shared ? 0 : static_cast<int>((index / inner_size) % channels);
    bottom_diff[index] = top_diff[index] * (bottom_data[index] > 0 ? Dtype(1) : slope[c]);
  }
}

// The slope gradient is taken first (in place, the bottom gradient overwrites
// the top diff), and summed by two gemv calls rather than atomics so the
// result is deterministic: over each (sample, slope) group, then over samples.
template <typename Dtype>
void PReLULayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  const int count = bottom[0]->count();
  const int channels = bottom[0]->shape(1);
  const int inner_size = bottom[0]->count(2);
  const Dtype* bottom_data = top[0] == bottom[0] ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  const Dtype* top_diff = top[0]->gpu_diff();
  const int num = bottom[0]->shape(0);
  if (this->param_propagate_down(0) && count > 0) {
    const int slope_group_size = count / (num * NumSlopes());
    PReLUSlopeTerms<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, top_diff, bottom_data, slope_terms_.mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
    Dtype* ones = ones_.mutable_gpu_data();
    gpu_set(ones_.count(), Dtype(1), ones);
    gpu_gemv<Dtype>(CblasNoTrans, num * NumSlopes(), slope_group_size, Dtype(1),
                    slope_terms_.gpu_data(), ones, Dtype(0), per_sample_sums_.mutable_gpu_data());
    gpu_gemv<Dtype>(CblasTrans, num, NumSlopes(), Dtype(1), per_sample_sums_.gpu_data(), ones,
                    Dtype(1), this->blobs_[0]->mutable_gpu_diff());
  }
  if (propagate_down[0]) {
    PReLUBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, channels, inner_size, channel_shared_, top_diff, bottom_data,
        this->blobs_[0]->gpu_data(), bottom[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(PReLULayer);

}  // namespace crema
