#include "crema/layers/normalize_layer.hpp"

namespace crema {

namespace {

constexpr int kReduceThreads = 256;

// The sum of every thread's value over the block (a power-of-two size), in a
// fixed order; thread 0 gets the total.
template <typename Dtype>
__device__ Dtype BlockSum(Dtype value) {
  __shared__ Dtype partial[kReduceThreads];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  return partial[0];
}

// The shape of the bottom as [N, C, S] and the layer's settings.
struct NormalizeDims {
  int num, channels, spatial;
  bool across_spatial, channel_shared;
  __device__ int NormIndex(int n, int s) const { return across_spatial ? n : n * spatial + s; }
  __device__ int ScaleIndex(int c) const { return channel_shared ? 0 : c; }
};

// across_spatial: block n sums a[i] * b[i] * w(c) over image n's C * S values.
template <typename Dtype>
__global__ void ImageDots(const NormalizeDims dims, const Dtype* a, const Dtype* b,
                          const Dtype* weight, Dtype* sums) {
  const int n = blockIdx.x;
  const int dim = dims.channels * dims.spatial;
  Dtype sum = 0;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    const int64_t index = int64_t{n} * dim + i;
    const Dtype w = weight ? weight[dims.ScaleIndex(i / dims.spatial)] : Dtype(1);
    sum += w * a[index] * b[index];
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) sums[n] = sum;
}

// Per position: thread (n, s) sums a * b * w(c) over the channels.
template <typename Dtype>
__global__ void PositionDots(const int64_t positions, const NormalizeDims dims, const Dtype* a,
                             const Dtype* b, const Dtype* weight, Dtype* sums) {
  CUDA_KERNEL_LOOP(index, positions) {
    const int n = index / dims.spatial;
    const int s = index % dims.spatial;
    Dtype sum = 0;
    for (int c = 0; c < dims.channels; ++c) {
      const int64_t i = (int64_t{n} * dims.channels + c) * dims.spatial + s;
      const Dtype w = weight ? weight[dims.ScaleIndex(c)] : Dtype(1);
      sum += w * a[i] * b[i];
    }
    sums[index] = sum;
  }
}

template <typename Dtype>
__global__ void SqrtPlusEps(const int64_t n, const Dtype eps, Dtype* values) {
  CUDA_KERNEL_LOOP(index, n) { values[index] = sqrt(values[index] + eps); }
}

template <typename Dtype>
__global__ void ScaleByNorm(const int64_t count, const NormalizeDims dims, const Dtype* x,
                            const Dtype* norms, const Dtype* scale, Dtype* y) {
  CUDA_KERNEL_LOOP(index, count) {
    const int s = index % dims.spatial;
    const int c = (index / dims.spatial) % dims.channels;
    const int n = index / (int64_t{dims.spatial} * dims.channels);
    y[index] = scale[dims.ScaleIndex(c)] * x[index] / norms[dims.NormIndex(n, s)];
  }
}

// Block b adds to scale_diff[b] the sum of top_diff * x / norm over the
// elements scale b multiplies (all of them when the scale is shared).
template <typename Dtype>
__global__ void ScaleDiff(const NormalizeDims dims, const Dtype* x, const Dtype* top_diff,
                          const Dtype* norms, Dtype* scale_diff) {
  const int channel_count = dims.channel_shared ? dims.channels : 1;
  const int64_t per_scale = int64_t{dims.num} * channel_count * dims.spatial;
  Dtype sum = 0;
  for (int64_t i = threadIdx.x; i < per_scale; i += blockDim.x) {
    const int s = i % dims.spatial;
    const int c = dims.channel_shared ? (i / dims.spatial) % dims.channels : blockIdx.x;
    const int n = i / (int64_t{dims.spatial} * channel_count);
    const int64_t index = (int64_t{n} * dims.channels + c) * dims.spatial + s;
    sum += top_diff[index] * x[index] / norms[dims.NormIndex(n, s)];
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) scale_diff[blockIdx.x] += sum;
}

template <typename Dtype>
__global__ void BottomDiff(const int64_t count, const NormalizeDims dims, const Dtype* x,
                           const Dtype* top_diff, const Dtype* norms, const Dtype* dots,
                           const Dtype* scale, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, count) {
    const int s = index % dims.spatial;
    const int c = (index / dims.spatial) % dims.channels;
    const int n = index / (int64_t{dims.spatial} * dims.channels);
    const int k = dims.NormIndex(n, s);
    const Dtype norm = norms[k];
    const Dtype g = scale[dims.ScaleIndex(c)] * top_diff[index];
    bottom_diff[index] = g / norm - x[index] * dots[k] / (norm * norm * norm);
  }
}

}  // namespace

// Sums a * b (times the scale when weight is given) over each norm's group.
template <typename Dtype>
void GroupDots(const NormalizeDims& dims, const Dtype* a, const Dtype* b, const Dtype* weight,
               Dtype* sums) {
  if (dims.across_spatial) {
    if (dims.num == 0) return;
    ImageDots<Dtype><<<dims.num, kReduceThreads>>>(dims, a, b, weight, sums);
  } else {
    const int64_t positions = int64_t{dims.num} * dims.spatial;
    PositionDots<Dtype><<<CREMA_GET_BLOCKS(positions), CREMA_CUDA_NUM_THREADS>>>(positions, dims, a,
                                                                                 b, weight, sums);
  }
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void NormalizeLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* x = bottom[0]->gpu_data();
  if (top[0] == bottom[0]) gpu_memcpy(count * sizeof(Dtype), x, bottom_copy_.mutable_gpu_data());
  const NormalizeDims dims{num_, channels_, spatial_, across_spatial_, channel_shared_};
  Dtype* norms = norms_.mutable_gpu_data();
  GroupDots<Dtype>(dims, x, x, nullptr, norms);
  SqrtPlusEps<Dtype>
      <<<CREMA_GET_BLOCKS(norms_.count()), CREMA_CUDA_NUM_THREADS>>>(norms_.count(), eps_, norms);
  ScaleByNorm<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, dims, x, norms, this->blobs_[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void NormalizeLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  const int count = bottom[0]->count();
  const Dtype* x = top[0] == bottom[0] ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  const Dtype* top_diff = top[0]->gpu_diff();
  const Dtype* norms = norms_.gpu_data();
  const Dtype* scale = this->blobs_[0]->gpu_data();
  const NormalizeDims dims{num_, channels_, spatial_, across_spatial_, channel_shared_};
  if (this->param_propagate_down_[0]) {
    ScaleDiff<Dtype><<<this->blobs_[0]->count(), kReduceThreads>>>(
        dims, x, top_diff, norms, this->blobs_[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  if (!propagate_down[0]) return;
  Dtype* dots = dots_.mutable_gpu_data();
  GroupDots<Dtype>(dims, top_diff, x, scale, dots);
  BottomDiff<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, dims, x, top_diff, norms, dots, scale, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(NormalizeLayer);

}  // namespace crema
