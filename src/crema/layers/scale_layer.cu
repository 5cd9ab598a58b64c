#include "crema/layers/scale_layer.hpp"

namespace crema {

namespace {

// out = in * scale, the scale broadcast over [outer, scale_dim, inner].
template <typename Dtype>
__global__ void BroadcastMultiply(const int64_t n, const Dtype* in, const Dtype* scale,
                                  int scale_dim, int inner_dim, Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] * scale[(index / inner_dim) % scale_dim]; }
}

}  // namespace

template <typename Dtype>
void ScaleLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  if (bottom[0] == top[0]) {
    gpu_memcpy(count * sizeof(Dtype), bottom[0]->gpu_data(), bottom_copy_.mutable_gpu_data());
  }
  BroadcastMultiply<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), ScaleBlob(bottom)->gpu_data(), scale_dim_, inner_dim_,
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  if (bias_layer_) bias_layer_->Forward(bias_bottom_vec_, top);
}

// The scale gradient sums top_diff * bottom, viewed as [outer, scale, inner],
// over outer and inner: the products go to scratch, then two matrix-vector
// products against ones, which (unlike atomics) sum in a fixed order.
template <typename Dtype>
void ScaleLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
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

INSTANTIATE_LAYER_GPU_FUNCS(ScaleLayer);

}  // namespace crema
