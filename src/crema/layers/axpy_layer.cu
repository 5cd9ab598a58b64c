#include "crema/layers/axpy_layer.hpp"

namespace crema {

namespace {

// Threads of a block of AxpyScaleDiff: a power of two (the tree reduction).
constexpr int kScaleDiffThreads = 256;

}  // namespace

template <typename Dtype>
__global__ void AxpyForward(const int64_t n, const int spatial_dim, const Dtype* a, const Dtype* x,
                            const Dtype* y, Dtype* top) {
  CUDA_KERNEL_LOOP(index, n) { top[index] = a[index / spatial_dim] * x[index] + y[index]; }
}

template <typename Dtype>
void AxpyLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int64_t count = top[0]->count();
  if (count == 0) return;
  AxpyForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, spatial_dim_, bottom[0]->gpu_data(), bottom[1]->gpu_data(), bottom[2]->gpu_data(),
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

// One block per channel (n, c) at a time: a_diff[channel] = the sum over the
// channel's values of x * top_diff, each thread summing a strided share and
// the block adding the shares in a tree.
template <typename Dtype>
__global__ void AxpyScaleDiff(const int scales, const int spatial_dim, const Dtype* x,
                              const Dtype* top_diff, Dtype* a_diff) {
  __shared__ Dtype shares[kScaleDiffThreads];
  for (int channel = blockIdx.x; channel < scales; channel += gridDim.x) {
    const int64_t offset = static_cast<int64_t>(channel) * spatial_dim;
    Dtype share = 0;
    for (int s = threadIdx.x; s < spatial_dim; s += blockDim.x) {
      share += x[offset + s] * top_diff[offset + s];
    }
    shares[threadIdx.x] = share;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) shares[threadIdx.x] += shares[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) a_diff[channel] = shares[0];
    __syncthreads();  // shares[0] is read before the next channel overwrites it
  }
}

template <typename Dtype>
__global__ void AxpyInputDiff(const int64_t n, const int spatial_dim, const Dtype* a,
                              const Dtype* top_diff, Dtype* x_diff) {
  CUDA_KERNEL_LOOP(index, n) { x_diff[index] = a[index / spatial_dim] * top_diff[index]; }
}

template <typename Dtype>
void AxpyLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  const int64_t count = top[0]->count();
  const Dtype* top_diff = top[0]->gpu_diff();
  if (propagate_down[0] && scales_ > 0) {
    const int blocks = scales_ < 65535 ? scales_ : 65535;
    AxpyScaleDiff<Dtype><<<blocks, kScaleDiffThreads>>>(
        scales_, spatial_dim_, bottom[1]->gpu_data(), top_diff, bottom[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  if (propagate_down[1]) {
    AxpyInputDiff<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, spatial_dim_, bottom[0]->gpu_data(), top_diff, bottom[1]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  // In place, y's gradient is the top's already.
  if (propagate_down[2] && top[0] != bottom[2]) {
    gpu_memcpy(count * sizeof(Dtype), top_diff, bottom[2]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(AxpyLayer);

}  // namespace crema
