#include "crema/layers/scale_layer.hpp"

namespace crema {

namespace {

constexpr int kPlaneThreads = 256;

// Planes of fewer values than this go to the flat kernels below: a block per
// plane would leave most of its threads idle.
constexpr int kMinPlaneForBlocks = 64;

// A product rounded on its own: a following addition is not fused into it,
// so the bias adds to the same product the two-step (scale, then bias) body
// and the CPU body compute.
__device__ inline float Product(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double Product(double a, double b) { return __dmul_rn(a, b); }

// out = in * scale, the scale broadcast over [outer, scale_dim, inner].
template <typename Dtype>
__global__ void BroadcastMultiply(const int64_t n, const Dtype* in, const Dtype* scale,
                                  int scale_dim, int inner_dim, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] * scale[(index / inner_dim) % scale_dim]; }
}

// One block per plane ([outer, scale_dim] pairs of inner_dim values), so the
// channel is found once per plane, not divided out per value: out = in *
// scale[d] (+ bias[d] where given); where copy is given, in is kept there
// in the same pass (in place, the backward pass needs it).
template <typename Dtype>
__global__ void ScalePlanes(int planes, int scale_dim, int inner_dim, const Dtype* in,
                            const Dtype* scale, const Dtype* bias, Dtype* copy, Dtype* out) {
  for (int plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const int d = plane % scale_dim;
    const Dtype s = scale[d];
    const Dtype b = bias ? bias[d] : Dtype(0);
    const int64_t offset = static_cast<int64_t>(plane) * inner_dim;
    for (int i = threadIdx.x; i < inner_dim; i += blockDim.x) {
      const Dtype x = in[offset + i];
      if (copy) copy[offset + i] = x;
      out[offset + i] = bias ? Product(x, s) + b : Product(x, s);
    }
  }
}

// The block's threads' values summed in a fixed order (a tree over shared
// memory), so a plane's sum is the same on every run. Every thread gets it.
template <typename Dtype>
__device__ Dtype BlockSum(Dtype value, Dtype* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const Dtype sum = shared[0];
  __syncthreads();
  return sum;
}

// The backward pass in one sweep, a block per plane: dx = dy * scale[d]
// where dx is given (dx may be dy, in place: each value is read before it
// is written), and where sums are given, each plane's sum of dy (sums row
// 0, the bias's) and of dy * x (row 1, the scale's).
template <typename Dtype>
__global__ void ScalePlanesBackward(int planes, int scale_dim, int inner_dim, const Dtype* dy,
                                    const Dtype* x, const Dtype* scale, Dtype* sums, Dtype* dx) {
  __shared__ Dtype shared[kPlaneThreads];
  for (int plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const Dtype s = scale[plane % scale_dim];
    const int64_t offset = static_cast<int64_t>(plane) * inner_dim;
    Dtype dy_sum = 0, dy_x_sum = 0;
    for (int i = threadIdx.x; i < inner_dim; i += blockDim.x) {
      const Dtype g = dy[offset + i];
      if (sums) {
        dy_sum += g;
        dy_x_sum += g * x[offset + i];
      }
      if (dx) dx[offset + i] = g * s;
    }
    if (!sums) continue;
    dy_sum = BlockSum(dy_sum, shared);
    dy_x_sum = BlockSum(dy_x_sum, shared);
    if (threadIdx.x == 0) {
      sums[plane] = dy_sum;
      sums[planes + plane] = dy_x_sum;
    }
  }
}

int PlaneBlocks(int planes) { return std::min(planes, 1 << 20); }

}  // namespace

template <typename Dtype>
void ScaleLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const bool in_place = bottom[0] == top[0];
  if (inner_dim_ >= kMinPlaneForBlocks) {
    const int planes = outer_dim_ * scale_dim_;
    Blob<Dtype>* bias = BiasBlob();
    ScalePlanes<Dtype><<<PlaneBlocks(planes), kPlaneThreads>>>(
        planes, scale_dim_, inner_dim_, bottom[0]->gpu_data(), ScaleBlob(bottom)->gpu_data(),
        bias ? bias->gpu_data() : nullptr, in_place ? bottom_copy_.mutable_gpu_data() : nullptr,
        top[0]->mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
    return;
  }
  if (in_place) {
    gpu_memcpy(count * sizeof(Dtype), bottom[0]->gpu_data(), bottom_copy_.mutable_gpu_data());
  }
  BroadcastMultiply<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), ScaleBlob(bottom)->gpu_data(), scale_dim_, inner_dim_,
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  if (bias_layer_) bias_layer_->Forward(bias_bottom_vec_, top);
}

template <typename Dtype>
void ScaleLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (inner_dim_ >= kMinPlaneForBlocks) return PlaneBackward_gpu(top, propagate_down, bottom);
  if (bias_layer_ && this->param_propagate_down(bias_param_id_)) {
    bias_layer_->Backward(top, {false}, bias_bottom_vec_);
  }
  const int num_bottoms = static_cast<int>(bottom.size());
  const int count = bottom[0]->count();
  Blob<Dtype>* scale = ScaleBlob(bottom);
  const Dtype* top_diff = top[0]->gpu_diff();
  if (ScaleGradientWanted(propagate_down, num_bottoms)) {
    const bool in_place = bottom[0] == top[0];
    const Dtype* bottom_data = in_place ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
    // The bottom diff is free scratch when it is about to be overwritten
    // (and is not the top diff, as it is in place).
    Dtype* products = propagate_down[0] && !in_place ? bottom[0]->mutable_gpu_diff()
                                                     : bottom_copy_.mutable_gpu_diff();
    gpu_mul(count, top_diff, bottom_data, products);
    Dtype* ones = ones_.mutable_gpu_data();
    gpu_set(ones_.count(), Dtype(1), ones);
    const Dtype* per_outer_sums = products;
    if (inner_dim_ > 1) {
      Dtype* partial_sums = partial_sums_.mutable_gpu_data();
      gpu_gemv(CblasNoTrans, outer_dim_ * scale_dim_, inner_dim_, Dtype(1), products, ones,
               Dtype(0), partial_sums);
      per_outer_sums = partial_sums;
    }
    // A learned scale accumulates its gradient; bottom[1]'s is overwritten.
    const Dtype accumulate = num_bottoms > 1 ? Dtype(0) : Dtype(1);
    gpu_gemv(CblasTrans, outer_dim_, scale_dim_, Dtype(1), per_outer_sums, ones, accumulate,
             scale->mutable_gpu_diff());
  }
  if (propagate_down[0]) {
    BroadcastMultiply<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, top_diff, scale->gpu_data(), scale_dim_, inner_dim_, bottom[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
}

// Planes large enough for a block each: one sweep gives the plane sums and
// the bottom gradient, then the sums are added up image by image (a
// matrix-vector product against ones, in a fixed order).
template <typename Dtype>
void ScaleLayer<Dtype>::PlaneBackward_gpu(const std::vector<Blob<Dtype>*>& top,
                                          const std::vector<bool>& propagate_down,
                                          const std::vector<Blob<Dtype>*>& bottom) {
  const int num_bottoms = static_cast<int>(bottom.size());
  const bool bias_wanted = bias_layer_ && this->param_propagate_down(bias_param_id_);
  const bool scale_wanted = ScaleGradientWanted(propagate_down, num_bottoms);
  if (!bias_wanted && !scale_wanted && !propagate_down[0]) return;
  const int planes = outer_dim_ * scale_dim_;
  Blob<Dtype>* scale = ScaleBlob(bottom);
  const Dtype* bottom_data = bottom[0] == top[0] ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  Dtype* sums = bias_wanted || scale_wanted ? partial_sums_.mutable_gpu_data() : nullptr;
  ScalePlanesBackward<Dtype><<<PlaneBlocks(planes), kPlaneThreads>>>(
      planes, scale_dim_, inner_dim_, top[0]->gpu_diff(), bottom_data, scale->gpu_data(), sums,
      propagate_down[0] ? bottom[0]->mutable_gpu_diff() : nullptr);
  CUDA_POST_KERNEL_CHECK;
  if (!sums) return;
  Dtype* ones = ones_.mutable_gpu_data();
  gpu_set(ones_.count(), Dtype(1), ones);
  if (scale_wanted) {
    // A learned scale accumulates its gradient; bottom[1]'s is overwritten.
    const Dtype accumulate = num_bottoms > 1 ? Dtype(0) : Dtype(1);
    gpu_gemv(CblasTrans, outer_dim_, scale_dim_, Dtype(1), sums + planes, ones, accumulate,
             scale->mutable_gpu_diff());
  }
  if (bias_wanted) {
    gpu_gemv(CblasTrans, outer_dim_, scale_dim_, Dtype(1), sums, ones, Dtype(1),
             BiasBlob()->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ScaleLayer);

}  // namespace crema
