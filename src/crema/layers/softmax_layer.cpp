#include "crema/layers/softmax_layer.hpp"

#include <algorithm>
#include <cmath>

namespace crema {

template <typename Dtype>
void SoftmaxLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const int axis = this->layer_param_.softmax_param().axis();
  const int num_axes = bottom[0]->num_axes();
  CREMA_LAYER_REQUIRE(axis >= -num_axes && axis < num_axes,
                      "softmax axis " << axis << " is out of range for a bottom of shape "
                                      << bottom[0]->shape_string());
  const int softmax_axis = bottom[0]->CanonicalAxisIndex(axis);
  outer_num_ = bottom[0]->count(0, softmax_axis);
  channels_ = bottom[0]->shape(softmax_axis);
  inner_num_ = bottom[0]->count(softmax_axis + 1);
  top[0]->ReshapeLike(*bottom[0]);
  per_position_.Reshape(std::vector<int>{outer_num_ * inner_num_});
}

// Works in place: each output element is written from the input element at
// the same index, after the max over its channels has been read.
template <typename Dtype>
void SoftmaxLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  if (bottom[0]->count() == 0) return;
  const int slice = channels_ * inner_num_;
  for (int i = 0; i < outer_num_; ++i) {
    const Dtype* in = bottom[0]->cpu_data() + i * slice;
    Dtype* out = top[0]->mutable_cpu_data() + i * slice;
    Dtype* scratch = per_position_.mutable_cpu_data() + i * inner_num_;
    std::copy(in, in + inner_num_, scratch);
    for (int c = 1; c < channels_; ++c) {
      for (int j = 0; j < inner_num_; ++j)
        scratch[j] = std::max(scratch[j], in[c * inner_num_ + j]);
    }
    for (int c = 0; c < channels_; ++c) {
      for (int j = 0; j < inner_num_; ++j) {
        out[c * inner_num_ + j] = std::exp(in[c * inner_num_ + j] - scratch[j]);
      }
    }
    std::fill(scratch, scratch + inner_num_, Dtype(0));
    for (int c = 0; c < channels_; ++c) {
      for (int j = 0; j < inner_num_; ++j) scratch[j] += out[c * inner_num_ + j];
    }
    for (int c = 0; c < channels_; ++c) {
      for (int j = 0; j < inner_num_; ++j) out[c * inner_num_ + j] /= scratch[j];
    }
  }
}

// dx_c = y_c * (dy_c - sum_k dy_k y_k). In place the sum is taken before any
// dy is overwritten.
template <typename Dtype>
void SoftmaxLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int slice = channels_ * inner_num_;
  for (int i = 0; i < outer_num_; ++i) {
    const Dtype* top_diff = top[0]->cpu_diff() + i * slice;
    const Dtype* top_data = top[0]->cpu_data() + i * slice;
    Dtype* bottom_diff = bottom[0]->mutable_cpu_diff() + i * slice;
    Dtype* dot = per_position_.mutable_cpu_data() + i * inner_num_;
    std::fill(dot, dot + inner_num_, Dtype(0));
    for (int c = 0; c < channels_; ++c) {
      for (int j = 0; j < inner_num_; ++j) {
        dot[j] += top_diff[c * inner_num_ + j] * top_data[c * inner_num_ + j];
      }
    }
    for (int c = 0; c < channels_; ++c) {
      for (int j = 0; j < inner_num_; ++j) {
        const int index = c * inner_num_ + j;
        bottom_diff[index] = top_data[index] * (top_diff[index] - dot[j]);
      }
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(SoftmaxLayer);
#endif

INSTANTIATE_CLASS(SoftmaxLayer);
REGISTER_LAYER_CLASS(Softmax);

}  // namespace crema
