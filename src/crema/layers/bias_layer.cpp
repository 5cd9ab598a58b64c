#include "crema/layers/bias_layer.hpp"

#include <algorithm>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/learned_blobs.hpp"

namespace crema {

template <typename Dtype>
void BiasLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  // A bias given as bottom[1], or one loaded with trained weights, needs no
  // blob of its own; Reshape checks its shape.
  if (bottom.size() > 1 || !this->blobs_.empty()) return;
  const BiasParameter& param = this->layer_param_.bias_param();
  this->blobs_.resize(1);
  this->blobs_[0].reset(
      new Blob<Dtype>(AxesShape(*this, *bottom[0], param.axis(), param.num_axes())));
  GetFiller<Dtype>(param.filler())->Fill(this->blobs_[0].get());
}

template <typename Dtype>
void BiasLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                               const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& bias = bottom.size() > 1 ? *bottom[1] : *this->blobs_[0];
  const int requested_axis = this->layer_param_.bias_param().axis();
  const int bottom_axes = bottom[0]->num_axes();
  // A scalar bias applies everywhere, whatever the axis says.
  int axis = 0;
  if (bias.num_axes() > 0) {
    CREMA_LAYER_REQUIRE(requested_axis >= -bottom_axes && requested_axis < bottom_axes,
                        "axis " << requested_axis << " is out of range for bottom[0] of shape "
                                << bottom[0]->shape_string());
    axis = bottom[0]->CanonicalAxisIndex(requested_axis);
  }
  CREMA_LAYER_REQUIRE(ShapeMatchesFromAxis(*bottom[0], axis, bias),
                      "the bias of shape "
                          << bias.shape_string() << " must equal the axes of bottom[0] from axis "
                          << axis << ", but bottom[0] has shape " << bottom[0]->shape_string());
  outer_dim_ = bottom[0]->count(0, axis);
  bias_dim_ = bias.count();
  inner_dim_ = bottom[0]->count(axis + bias.num_axes());
  if (bottom[0] != top[0]) top[0]->ReshapeLike(*bottom[0]);
  partial_sums_.Reshape({outer_dim_ * bias_dim_});
  ones_.Reshape({std::max(outer_dim_, inner_dim_)});
}

template <typename Dtype>
void BiasLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bias = (bottom.size() > 1 ? bottom[1] : this->blobs_[0].get())->cpu_data();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int n = 0; n < outer_dim_; ++n) {
    for (int d = 0; d < bias_dim_; ++d) {
      const int offset = (n * bias_dim_ + d) * inner_dim_;
      for (int i = 0; i < inner_dim_; ++i) {
        top_data[offset + i] = bottom_data[offset + i] + bias[d];
      }
    }
  }
}

template <typename Dtype>
bool BiasLayer<Dtype>::BiasGradientWanted(const std::vector<bool>& propagate_down,
                                          int num_bottoms) const {
  return num_bottoms > 1 ? propagate_down[1] : this->param_propagate_down(0);
}

template <typename Dtype>
void BiasLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->cpu_diff();
  if (propagate_down[0] && bottom[0] != top[0]) {
    cpu_copy(bottom[0]->count(), top_diff, bottom[0]->mutable_cpu_diff());
  }
  const int num_bottoms = static_cast<int>(bottom.size());
  if (!BiasGradientWanted(propagate_down, num_bottoms)) return;
  // A learned bias accumulates its gradient (the solver zeroes it); a bias
  // from bottom[1] is overwritten.
  Blob<Dtype>* bias = num_bottoms > 1 ? bottom[1] : this->blobs_[0].get();
  Dtype* bias_diff = bias->mutable_cpu_diff();
  if (num_bottoms > 1) cpu_set(bias_dim_, Dtype(0), bias_diff);
  for (int n = 0; n < outer_dim_; ++n) {
    for (int d = 0; d < bias_dim_; ++d) {
      const Dtype* block = top_diff + (n * bias_dim_ + d) * inner_dim_;
      Dtype sum = 0;
      for (int i = 0; i < inner_dim_; ++i) sum += block[i];
      bias_diff[d] += sum;
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(BiasLayer);
#endif

INSTANTIATE_CLASS(BiasLayer);
REGISTER_LAYER_CLASS(Bias);

}  // namespace crema
