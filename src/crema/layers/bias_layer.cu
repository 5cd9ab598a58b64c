#include "crema/layers/bias_layer.hpp"

namespace crema {

namespace {

template <typename Dtype>
__global__ void BiasForward(const int64_t n, const Dtype* in, const Dtype* bias, int bias_dim,
                            int inner_dim, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] + bias[(index / inner_dim) % bias_dim]; }
}

}  // namespace

template <typename Dtype>
void BiasLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bias = (bottom.size() > 1 ? bottom[1] : this->blobs_[0].get())->gpu_data();
  const int count = top[0]->count();
  BiasForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), bias, bias_dim_, inner_dim_, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

// The bias gradient sums the top diff, viewed as [outer, bias, inner], over
// outer and inner: two matrix-vector products against ones, which (unlike
// atomics) sum in a fixed order.
template <typename Dtype>
void BiasLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->gpu_diff();
  if (propagate_down[0] && bottom[0] != top[0]) {
    gpu_memcpy(bottom[0]->count() * sizeof(Dtype), top_diff, bottom[0]->mutable_gpu_diff());
  }
  const int num_bottoms = static_cast<int>(bottom.size());
  if (!BiasGradientWanted(propagate_down, num_bottoms)) return;
  Blob<Dtype>* bias = num_bottoms > 1 ? bottom[1] : this->blobs_[0].get();
  Dtype* ones = ones_.mutable_gpu_data();
  gpu_set(ones_.count(), Dtype(1), ones);
  const Dtype* per_outer_sums = top_diff;
  if (inner_dim_ > 1) {
    Dtype* partial_sums = partial_sums_.mutable_gpu_data();
    gpu_gemv(CblasNoTrans, outer_dim_ * bias_dim_, inner_dim_, Dtype(1), top_diff, ones, Dtype(0),
             partial_sums);
    per_outer_sums = partial_sums;
  }
  const Dtype accumulate = num_bottoms > 1 ? Dtype(0) : Dtype(1);
  gpu_gemv(CblasTrans, outer_dim_, bias_dim_, Dtype(1), per_outer_sums, ones, accumulate,
           bias->mutable_gpu_diff());
}

INSTANTIATE_LAYER_GPU_FUNCS(BiasLayer);

}  // namespace crema
