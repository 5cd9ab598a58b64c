#include "crema/layers/reduction_layer.hpp"

namespace crema {

namespace {

template <typename Dtype>
__device__ Dtype ReducedTerm(ReductionParameter::ReductionOp operation, Dtype x) {
  switch (operation) {
    case ReductionParameter::ASUM:
      return x < 0 ? -x : x;
    case ReductionParameter::SUMSQ:
      return x * x;
    default:
      return x;
  }
}

template <typename Dtype>
__device__ Dtype TermDerivative(ReductionParameter::ReductionOp operation, Dtype x) {
  switch (operation) {
    case ReductionParameter::ASUM:
      return static_cast<Dtype>((x > 0) - (x < 0));
    case ReductionParameter::SUMSQ:
      return 2 * x;
    default:
      return Dtype(1);
  }
}

// One block per output row: each thread sums a strided slice, then the block
// adds the partial sums in a fixed tree order, so results are deterministic
// (no atomics).
template <typename Dtype>
__global__ void ReduceRows(const int num_rows, const int row_size,
                           ReductionParameter::ReductionOp operation, const Dtype scale,
                           const Dtype* in, Dtype* out) {
  __shared__ Dtype partial[CREMA_CUDA_NUM_THREADS];
  for (int row = blockIdx.x; row < num_rows; row += gridDim.x) {
    const Dtype* row_in = in + static_cast<int64_t>(row) * row_size;
    Dtype sum = 0;
    for (int j = threadIdx.x; j < row_size; j += blockDim.x)
      sum += ReducedTerm(operation, row_in[j]);
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
      if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = scale * partial[0];
    // The next row reuses `partial`: nobody may write it before thread 0 has read it.
    __syncthreads();
  }
}

template <typename Dtype>
__global__ void ReductionBackward(const int64_t n, const int row_size,
                                  ReductionParameter::ReductionOp operation, const Dtype scale,
                                  const Dtype* top_diff, const Dtype* bottom_data,
                                  Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    bottom_diff[index] =
        scale * top_diff[index / row_size] * TermDerivative(operation, bottom_data[index]);
  }
}

}  // namespace

template <typename Dtype>
void ReductionLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  if (num_outputs_ == 0) return;
  if (reduced_size_ == 0) {
    gpu_set(num_outputs_, Dtype(0), top[0]->mutable_gpu_data());
    return;
  }
  // The block-wide tree sum halves the stride each step.
  static_assert((CREMA_CUDA_NUM_THREADS & (CREMA_CUDA_NUM_THREADS - 1)) == 0,
                "ReduceRows needs a power-of-two block size");
  const int num_blocks = num_outputs_ < 65535 ? num_outputs_ : 65535;
  ReduceRows<Dtype><<<num_blocks, CREMA_CUDA_NUM_THREADS>>>(num_outputs_, reduced_size_, operation_,
                                                            Scale(), bottom[0]->gpu_data(),
                                                            top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ReductionLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  if (count == 0) return;
  ReductionBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, reduced_size_, operation_, Scale(), top[0]->gpu_diff(), bottom[0]->gpu_data(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ReductionLayer);

}  // namespace crema
