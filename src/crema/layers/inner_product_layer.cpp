#include "crema/layers/inner_product_layer.hpp"

#include <cstdint>
#include <sstream>
#include <string>

#include "crema/filler.hpp"
#include "crema/layers/learned_blobs.hpp"

namespace crema {

template <typename Dtype>
int InnerProductLayer<Dtype>::CanonicalAxis(const Blob<Dtype>& bottom) const {
  const int axis = this->layer_param_.inner_product_param().axis();
  const int num_axes = bottom.num_axes();
  CREMA_LAYER_REQUIRE(
      axis >= -num_axes && axis < num_axes,
      "axis " << axis << " is out of range for a bottom of shape " << bottom.shape_string());
  return axis < 0 ? axis + num_axes : axis;
}

template <typename Dtype>
void InnerProductLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  const InnerProductParameter& param = this->layer_param_.inner_product_param();
  CREMA_LAYER_REQUIRE(param.num_output() > 0,
                      "num_output must be positive, got " << param.num_output());
  num_output_ = static_cast<int>(param.num_output());
  bias_term_ = param.bias_term();
  transpose_ = param.transpose();
  input_size_ = bottom[0]->count(CanonicalAxis(*bottom[0]));

  const std::vector<int> weight_shape = transpose_ ? std::vector<int>{input_size_, num_output_}
                                                   : std::vector<int>{num_output_, input_size_};
  SetUpWeightsAndBias(this, weight_shape, bias_term_, num_output_, param.weight_filler(),
                      param.bias_filler());
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void InnerProductLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const int axis = CanonicalAxis(*bottom[0]);
  const int input_size = bottom[0]->count(axis);
  CREMA_LAYER_REQUIRE(input_size == input_size_,
                      "the bottom's inner size (count from axis "
                          << axis << ") must stay " << input_size_ << " (the weights' size), found "
                          << input_size << " in a bottom of shape " << bottom[0]->shape_string());
  batch_size_ = bottom[0]->count(0, axis);
  std::vector<int> top_shape(bottom[0]->shape().begin(), bottom[0]->shape().begin() + axis);
  top_shape.push_back(num_output_);
  top[0]->Reshape(top_shape);
  // Compared by shape: a never-shaped multiplier has count 0 too (an empty batch).
  if (bias_term_ && bias_multiplier_.shape() != std::vector<int>{batch_size_}) {
    bias_multiplier_.Reshape(std::vector<int>{batch_size_});
    cpu_set(batch_size_, Dtype(1), bias_multiplier_.mutable_cpu_data());
  }
}

template <typename Dtype>
void InnerProductLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  Dtype* top_data = top[0]->mutable_cpu_data();
  cpu_gemm<Dtype>(CblasNoTrans, transpose_ ? CblasNoTrans : CblasTrans, batch_size_, num_output_,
                  input_size_, Dtype(1), bottom[0]->cpu_data(), this->blobs_[0]->cpu_data(),
                  Dtype(0), top_data);
  if (bias_term_) {
    cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, batch_size_, num_output_, 1, Dtype(1),
                    bias_multiplier_.cpu_data(), this->blobs_[1]->cpu_data(), Dtype(1), top_data);
  }
}

template <typename Dtype>
void InnerProductLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->cpu_diff();
  if (this->param_propagate_down(0)) {
    const Dtype* bottom_data = bottom[0]->cpu_data();
    Dtype* weight_diff = this->blobs_[0]->mutable_cpu_diff();
    if (transpose_) {
      cpu_gemm<Dtype>(CblasTrans, CblasNoTrans, input_size_, num_output_, batch_size_, Dtype(1),
                      bottom_data, top_diff, Dtype(1), weight_diff);
    } else {
      cpu_gemm<Dtype>(CblasTrans, CblasNoTrans, num_output_, input_size_, batch_size_, Dtype(1),
                      top_diff, bottom_data, Dtype(1), weight_diff);
    }
  }
  if (bias_term_ && this->param_propagate_down(1)) {
    cpu_gemv<Dtype>(CblasTrans, batch_size_, num_output_, Dtype(1), top_diff,
                    bias_multiplier_.cpu_data(), Dtype(1), this->blobs_[1]->mutable_cpu_diff());
  }
  if (propagate_down[0]) {
    cpu_gemm<Dtype>(CblasNoTrans, transpose_ ? CblasTrans : CblasNoTrans, batch_size_, input_size_,
                    num_output_, Dtype(1), top_diff, this->blobs_[0]->cpu_data(), Dtype(0),
                    bottom[0]->mutable_cpu_diff());
  }
}

#ifndef CREMA_CUDA
STUB_GPU(InnerProductLayer);
#endif

INSTANTIATE_CLASS(InnerProductLayer);
REGISTER_LAYER_CLASS(InnerProduct);

}  // namespace crema
