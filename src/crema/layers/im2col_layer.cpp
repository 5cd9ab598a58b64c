#include "crema/layers/im2col_layer.hpp"

namespace crema {

template <typename Dtype>
void Im2colLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  this->ReadGeometry(*bottom[0]);
  // The columns are the bottom's own; there are no filters.
  this->conv_in_channels_ = this->channels_;
}

template <typename Dtype>
void Im2colLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  this->ReshapeGeometry(bottom);
  top[0]->Reshape(this->TopShape(*bottom[0], this->column_rows_));
}

template <typename Dtype>
void Im2colLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int n = 0; n < this->num_; ++n) {
    this->ImageToColumns_cpu(bottom_data + static_cast<size_t>(n) * this->conv_input_dim_,
                             top_data + static_cast<size_t>(n) * TopImageSize());
  }
}

template <typename Dtype>
void Im2colLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  for (int n = 0; n < this->num_; ++n) {
    this->ColumnsToImage_cpu(top_diff + static_cast<size_t>(n) * TopImageSize(),
                             bottom_diff + static_cast<size_t>(n) * this->conv_input_dim_);
  }
}

#ifndef CREMA_CUDA
STUB_GPU(Im2colLayer);
#endif

INSTANTIATE_CLASS(Im2colLayer);
REGISTER_LAYER_CLASS(Im2col);

}  // namespace crema
