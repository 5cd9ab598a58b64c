#include "crema/layers/mvn_layer.hpp"

namespace crema {

namespace {

template <typename Dtype>
__global__ void SubtractRowMean(const int64_t n, const Dtype* in, const Dtype* mean, int row_dim,
                                Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) { out[index] = in[index] - mean[index / row_dim]; }
}

template <typename Dtype>
__global__ void SqrtInPlace(const int n, Dtype* values) {
  CUDA_KERNEL_LOOP(index, n) { values[index] = sqrt(values[index]); }
}

// Divides by the row's std + eps, writing the result to out and normalized.
template <typename Dtype>
__global__ void DivideByRowStd(const int64_t n, const Dtype* std, Dtype eps, int row_dim,
                               Dtype* out, Dtype* normalized) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype value = out[index] / (std[index / row_dim] + eps);
    out[index] = value;
    normalized[index] = value;
  }
}

// See Backward_cpu for the formula.
template <typename Dtype>
__global__ void NormalizedBackward(const int64_t n, const Dtype* top_diff, const Dtype* y,
                                   const Dtype* mean_top_diff, const Dtype* mean_top_diff_y,
                                   const Dtype* std, Dtype eps, int row_dim, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int64_t r = index / row_dim;
    const Dtype std_plus_eps = std[r] + eps;
    const Dtype variance_term = std[r] > 0 ? mean_top_diff_y[r] * std_plus_eps / std[r] : Dtype(0);
    bottom_diff[index] =
        (top_diff[index] - mean_top_diff[r] - y[index] * variance_term) / std_plus_eps;
  }
}

}  // namespace

// One matrix-vector product against ones: a fixed summation order, unlike
// atomics.
template <typename Dtype>
void MVNLayer<Dtype>::RowMeans_gpu(const Dtype* data, Dtype* means) {
  Dtype* ones = ones_.mutable_gpu_data();
  gpu_set(row_dim_, Dtype(1), ones);
  gpu_gemv(CblasNoTrans, rows_, row_dim_, Dtype(1) / row_dim_, data, ones, Dtype(0), means);
}

template <typename Dtype>
void MVNLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  Dtype* mean = mean_.mutable_gpu_data();
  RowMeans_gpu(bottom_data, mean);
  SubtractRowMean<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom_data, mean, row_dim_, top_data);
  CUDA_POST_KERNEL_CHECK;
  if (!normalize_variance_) return;
  Dtype* squares = scratch_.mutable_gpu_data();
  gpu_mul(count, top_data, top_data, squares);
  Dtype* std = std_.mutable_gpu_data();
  RowMeans_gpu(squares, std);
  SqrtInPlace<Dtype><<<CREMA_GET_BLOCKS(rows_), CREMA_CUDA_NUM_THREADS>>>(rows_, std);
  CUDA_POST_KERNEL_CHECK;
  DivideByRowStd<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, std, eps_, row_dim_, top_data, normalized_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void MVNLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = top[0]->count();
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* mean_top_diff = mean_top_diff_.mutable_gpu_data();
  RowMeans_gpu(top_diff, mean_top_diff);
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  if (!normalize_variance_) {
    SubtractRowMean<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, top_diff, mean_top_diff, row_dim_, bottom_diff);
    CUDA_POST_KERNEL_CHECK;
    return;
  }
  const Dtype* y = normalized_.gpu_data();
  Dtype* products = scratch_.mutable_gpu_data();
  gpu_mul(count, top_diff, y, products);
  Dtype* mean_top_diff_y = mean_top_diff_y_.mutable_gpu_data();
  RowMeans_gpu(products, mean_top_diff_y);
  NormalizedBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top_diff, y, mean_top_diff, mean_top_diff_y, std_.gpu_data(), eps_, row_dim_,
      bottom_diff);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(MVNLayer);

}  // namespace crema
