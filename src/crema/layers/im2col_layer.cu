#include "crema/layers/im2col_layer.hpp"

namespace crema {

template <typename Dtype>
void Im2colLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  for (int n = 0; n < this->num_; ++n) {
    this->ImageToColumns_gpu(bottom_data + static_cast<size_t>(n) * this->conv_input_dim_,
                             top_data + static_cast<size_t>(n) * TopImageSize());
  }
}

template <typename Dtype>
void Im2colLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  for (int n = 0; n < this->num_; ++n) {
    this->ColumnsToImage_gpu(top_diff + static_cast<size_t>(n) * TopImageSize(),
                             bottom_diff + static_cast<size_t>(n) * this->conv_input_dim_);
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(Im2colLayer);

}  // namespace crema
