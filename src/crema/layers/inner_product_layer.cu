#include "crema/layers/inner_product_layer.hpp"

namespace crema {

template <typename Dtype>
void InnerProductLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  Dtype* top_data = top[0]->mutable_gpu_data();
  gpu_gemm<Dtype>(CblasNoTrans, transpose_ ? CblasNoTrans : CblasTrans, batch_size_, num_output_,
                  input_size_, Dtype(1), bottom[0]->gpu_data(), this->blobs_[0]->gpu_data(),
                  Dtype(0), top_data);
  if (bias_term_) {
    gpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, batch_size_, num_output_, 1, Dtype(1),
                    bias_multiplier_.gpu_data(), this->blobs_[1]->gpu_data(), Dtype(1), top_data);
  }
}

template <typename Dtype>
void InnerProductLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->gpu_diff();
  if (this->param_propagate_down(0)) {
    const Dtype* bottom_data = bottom[0]->gpu_data();
    Dtype* weight_diff = this->blobs_[0]->mutable_gpu_diff();
    if (transpose_) {
      gpu_gemm<Dtype>(CblasTrans, CblasNoTrans, input_size_, num_output_, batch_size_, Dtype(1),
                      bottom_data, top_diff, Dtype(1), weight_diff);
    } else {
      gpu_gemm<Dtype>(CblasTrans, CblasNoTrans, num_output_, input_size_, batch_size_, Dtype(1),
                      top_diff, bottom_data, Dtype(1), weight_diff);
    }
  }
  if (bias_term_ && this->param_propagate_down(1)) {
    gpu_gemv<Dtype>(CblasTrans, batch_size_, num_output_, Dtype(1), top_diff,
                    bias_multiplier_.gpu_data(), Dtype(1), this->blobs_[1]->mutable_gpu_diff());
  }
  if (propagate_down[0]) {
    gpu_gemm<Dtype>(CblasNoTrans, transpose_ ? CblasTrans : CblasNoTrans, batch_size_, input_size_,
                    num_output_, Dtype(1), top_diff, this->blobs_[0]->gpu_data(), Dtype(0),
                    bottom[0]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(InnerProductLayer);

}  // namespace crema
