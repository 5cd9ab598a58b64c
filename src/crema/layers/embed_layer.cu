#include "crema/layers/embed_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void EmbedLookup(const int64_t n, const Dtype* index_data, const Dtype* weight,
                            int num_output, Dtype* top_data) {
  CUDA_KERNEL_LOOP(top_index, n) {
    const int64_t lookup = top_index / num_output;
    const int column = static_cast<int>(top_index % num_output);
    const int64_t row = static_cast<int64_t>(index_data[lookup]);
    top_data[top_index] = weight[row * num_output + column];
  }
}

// One thread per column of the table walks the lookups in order: rows hit
// several times are summed by one thread in a fixed order, so the result is
// deterministic (and equal to the CPU's) without atomics. The parallelism is
// num_output wide, which suits the small batches of index blobs.
template <typename Dtype>
__global__ void EmbedWeightGradient(const int num_output, const int num_indices,
                                    const Dtype* index_data, const Dtype* top_diff,
                                    Dtype* weight_diff) {
  CUDA_KERNEL_LOOP(column, num_output) {
    for (int n = 0; n < num_indices; ++n) {
      const int64_t row = static_cast<int64_t>(index_data[n]);
      weight_diff[row * num_output + column] +=
          top_diff[static_cast<int64_t>(n) * num_output + column];
    }
  }
}

template <typename Dtype>
void EmbedLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  CheckIndices(*bottom[0]);
  Dtype* top_data = top[0]->mutable_gpu_data();
  const int count = top[0]->count();
  EmbedLookup<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), this->blobs_[0]->gpu_data(), num_output_, top_data);
  CUDA_POST_KERNEL_CHECK;
  if (bias_term_) {
    gpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, num_indices_, num_output_, 1, Dtype(1),
                    bias_multiplier_.gpu_data(), this->blobs_[1]->gpu_data(), Dtype(1), top_data);
  }
}

template <typename Dtype>
void EmbedLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  RefuseBottomGradient(propagate_down);
  const Dtype* top_diff = top[0]->gpu_diff();
  if (this->param_propagate_down(0)) {
    EmbedWeightGradient<Dtype><<<CREMA_GET_BLOCKS(num_output_), CREMA_CUDA_NUM_THREADS>>>(
        num_output_, num_indices_, bottom[0]->gpu_data(), top_diff,
        this->blobs_[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  if (bias_term_ && this->param_propagate_down(1)) {
    gpu_gemv<Dtype>(CblasTrans, num_indices_, num_output_, Dtype(1), top_diff,
                    bias_multiplier_.gpu_data(), Dtype(1), this->blobs_[1]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(EmbedLayer);

}  // namespace crema
