#include "crema/layers/embed_layer.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "crema/filler.hpp"
#include "crema/layers/learned_blobs.hpp"

namespace crema {

template <typename Dtype>
void EmbedLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const EmbedParameter& param = this->layer_param_.embed_param();
  CREMA_LAYER_REQUIRE(param.num_output() > 0,
                      "num_output must be positive, got " << param.num_output());
  CREMA_LAYER_REQUIRE(param.input_dim() > 0,
                      "input_dim must be positive, got " << param.input_dim());
  num_output_ = static_cast<int>(param.num_output());
  input_dim_ = static_cast<int>(param.input_dim());
  bias_term_ = param.bias_term();

  SetUpWeightsAndBias(this, {input_dim_, num_output_}, bias_term_, num_output_,
                      param.weight_filler(), param.bias_filler());
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void EmbedLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  num_indices_ = bottom[0]->count();
  std::vector<int> top_shape = bottom[0]->shape();
  top_shape.push_back(num_output_);
  top[0]->Reshape(top_shape);
  // Compared by shape: a never-shaped multiplier has count 0 too (an empty batch).
  if (bias_term_ && bias_multiplier_.shape() != std::vector<int>{num_indices_}) {
    bias_multiplier_.Reshape(std::vector<int>{num_indices_});
    cpu_set(num_indices_, Dtype(1), bias_multiplier_.mutable_cpu_data());
  }
}

// Runs on the host in both modes: index blobs are small, and a bad index must
// be reported as a user error rather than read out of bounds on the device.
template <typename Dtype>
void EmbedLayer<Dtype>::CheckIndices(const Blob<Dtype>& indices) const {
  const Dtype* index_data = indices.cpu_data();
  for (int n = 0; n < indices.count(); ++n) {
    const Dtype value = index_data[n];
    CREMA_LAYER_REQUIRE(
        value >= 0 && value < input_dim_ && std::floor(value) == value,
        "bottom element " << n << " is " << value
                          << ", not a whole-number index in [0, input_dim = " << input_dim_ << ")");
  }
}

template <typename Dtype>
void EmbedLayer<Dtype>::RefuseBottomGradient(const std::vector<bool>& propagate_down) const {
  CREMA_LAYER_REQUIRE(!propagate_down[0],
                      "cannot back-propagate to its bottom: it holds indices, not values");
}

template <typename Dtype>
void EmbedLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  CheckIndices(*bottom[0]);
  const Dtype* index_data = bottom[0]->cpu_data();
  const Dtype* weight = this->blobs_[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int n = 0; n < num_indices_; ++n) {
    const int row = static_cast<int>(index_data[n]);
    cpu_copy(num_output_, weight + static_cast<int64_t>(row) * num_output_,
             top_data + static_cast<int64_t>(n) * num_output_);
  }
  if (bias_term_) {
    cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, num_indices_, num_output_, 1, Dtype(1),
                    bias_multiplier_.cpu_data(), this->blobs_[1]->cpu_data(), Dtype(1), top_data);
  }
}

template <typename Dtype>
void EmbedLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  RefuseBottomGradient(propagate_down);
  const Dtype* top_diff = top[0]->cpu_diff();
  if (this->param_propagate_down(0)) {
    const Dtype* index_data = bottom[0]->cpu_data();
    Dtype* weight_diff = this->blobs_[0]->mutable_cpu_diff();
    for (int n = 0; n < num_indices_; ++n) {
      const int row = static_cast<int>(index_data[n]);
      cpu_axpy(num_output_, Dtype(1), top_diff + static_cast<int64_t>(n) * num_output_,
               weight_diff + static_cast<int64_t>(row) * num_output_);
    }
  }
  if (bias_term_ && this->param_propagate_down(1)) {
    cpu_gemv<Dtype>(CblasTrans, num_indices_, num_output_, Dtype(1), top_diff,
                    bias_multiplier_.cpu_data(), Dtype(1), this->blobs_[1]->mutable_cpu_diff());
  }
}

#ifndef CREMA_CUDA
STUB_GPU(EmbedLayer);
#endif

INSTANTIATE_CLASS(EmbedLayer);
REGISTER_LAYER_CLASS(Embed);

}  // namespace crema
