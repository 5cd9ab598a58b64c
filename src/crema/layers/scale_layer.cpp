#include "crema/layers/scale_layer.hpp"

#include <algorithm>
#include <vector>

#include "crema/filler.hpp"

namespace crema {

template <typename Dtype>
void ScaleLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  // A scale loaded with trained weights is kept; Reshape checks its shape.
  if (bottom.size() == 1 && this->blobs_.empty()) CreateLearnedScale(bottom);
  ComputeDims(bottom);
  if (this->layer_param_.scale_param().bias_term()) SetUpBias(bottom, top);
}

template <typename Dtype>
void ScaleLayer<Dtype>::CreateLearnedScale(const std::vector<Blob<Dtype>*>& bottom) {
  const ScaleParameter& param = this->layer_param_.scale_param();
  const int bottom_axes = bottom[0]->num_axes();
  CREMA_LAYER_REQUIRE(param.axis() >= -bottom_axes && param.axis() < bottom_axes,
                      "axis " << param.axis() << " is out of range for bottom[0] of shape "
                              << bottom[0]->shape_string());
  const int axis = bottom[0]->CanonicalAxisIndex(param.axis());
  CREMA_LAYER_REQUIRE(
      param.num_axes() >= -1,
      "num_axes must be -1 (to the last axis) or non-negative, got " << param.num_axes());
  const int end_axis = param.num_axes() == -1 ? bottom_axes : axis + param.num_axes();
  CREMA_LAYER_REQUIRE(end_axis <= bottom_axes,
                      "axis " << axis << " with num_axes " << param.num_axes()
                              << " runs past the last axis of bottom[0] of shape "
                              << bottom[0]->shape_string());
  const std::vector<int> scale_shape(bottom[0]->shape().begin() + axis,
                                     bottom[0]->shape().begin() + end_axis);
  this->blobs_.resize(1);
  this->blobs_[0].reset(new Blob<Dtype>(scale_shape));
  // Unlike a bias, a scale starts as the identity.
  FillerParameter filler_param = param.filler();
  if (!param.has_filler()) filler_param.set_value(1);
  GetFiller<Dtype>(filler_param)->Fill(this->blobs_[0].get());
}

template <typename Dtype>
void ScaleLayer<Dtype>::SetUpBias(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const ScaleParameter& param = this->layer_param_.scale_param();
  LayerParameter bias_layer_param;
  bias_layer_param.set_name(this->layer_param_.name() + "/bias");
  BiasParameter* bias_param = bias_layer_param.mutable_bias_param();
  // The bias takes the scale's shape.
  bias_param->set_axis(param.axis());
  bias_param->set_num_axes(ScaleBlob(bottom)->num_axes());
  *bias_param->mutable_filler() = param.bias_filler();
  bias_layer_.reset(new BiasLayer<Dtype>(bias_layer_param));
  bias_param_id_ = bottom.size() > 1 ? 0 : 1;
  const bool bias_loaded = static_cast<int>(this->blobs_.size()) > bias_param_id_;
  if (bias_loaded) bias_layer_->blobs().push_back(this->blobs_[bias_param_id_]);
  bias_bottom_vec_ = {bottom[0]};
  bias_layer_->SetUp(bias_bottom_vec_, top);
  if (!bias_loaded) this->blobs_.push_back(bias_layer_->blobs()[0]);
}

template <typename Dtype>
void ScaleLayer<Dtype>::ComputeDims(const std::vector<Blob<Dtype>*>& bottom) {
  const Blob<Dtype>& scale = *ScaleBlob(bottom);
  const int requested_axis = this->layer_param_.scale_param().axis();
  const int bottom_axes = bottom[0]->num_axes();
  // A scalar scale applies everywhere, whatever the axis says.
  int axis = 0;
  if (scale.num_axes() > 0) {
    CREMA_LAYER_REQUIRE(requested_axis >= -bottom_axes && requested_axis < bottom_axes,
                        "axis " << requested_axis << " is out of range for bottom[0] of shape "
                                << bottom[0]->shape_string());
    axis = bottom[0]->CanonicalAxisIndex(requested_axis);
  }
  CREMA_LAYER_REQUIRE(ShapeMatchesFromAxis(*bottom[0], axis, scale),
                      "the scale of shape "
                          << scale.shape_string() << " must equal the axes of bottom[0] from axis "
                          << axis << ", but bottom[0] has shape " << bottom[0]->shape_string());
  outer_dim_ = bottom[0]->count(0, axis);
  scale_dim_ = scale.count();
  inner_dim_ = bottom[0]->count(axis + scale.num_axes());
}

template <typename Dtype>
void ScaleLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  ComputeDims(bottom);
  if (bottom[0] != top[0]) top[0]->ReshapeLike(*bottom[0]);
  bottom_copy_.ReshapeLike(*bottom[0]);
  partial_sums_.Reshape({outer_dim_ * scale_dim_});
  ones_.Reshape({std::max(outer_dim_, inner_dim_)});
  if (bias_layer_) {
    bias_bottom_vec_[0] = top[0];
    bias_layer_->Reshape(bias_bottom_vec_, top);
  }
}

template <typename Dtype>
void ScaleLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  if (bottom[0] == top[0]) {
    cpu_copy(count, bottom[0]->cpu_data(), bottom_copy_.mutable_cpu_data());
  }
  const Dtype* scale = ScaleBlob(bottom)->cpu_data();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int n = 0; n < outer_dim_; ++n) {
    for (int d = 0; d < scale_dim_; ++d) {
      const int offset = (n * scale_dim_ + d) * inner_dim_;
      for (int i = 0; i < inner_dim_; ++i) {
        top_data[offset + i] = bottom_data[offset + i] * scale[d];
      }
    }
  }
  if (bias_layer_) bias_layer_->Forward(bias_bottom_vec_, top);
}

template <typename Dtype>
bool ScaleLayer<Dtype>::ScaleGradientWanted(const std::vector<bool>& propagate_down,
                                            int num_bottoms) const {
  return num_bottoms > 1 ? propagate_down[1] : this->param_propagate_down(0);
}

template <typename Dtype>
void ScaleLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (bias_layer_ && this->param_propagate_down(bias_param_id_)) {
    bias_layer_->Backward(top, {false}, bias_bottom_vec_);
  }
  const int num_bottoms = static_cast<int>(bottom.size());
  Blob<Dtype>* scale = ScaleBlob(bottom);
  const Dtype* top_diff = top[0]->cpu_diff();
  // The scale's gradient comes first: in place, the bottom diff written
  // below is the top diff it reads.
  if (ScaleGradientWanted(propagate_down, num_bottoms)) {
    const Dtype* bottom_data =
        bottom[0] == top[0] ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
    // A learned scale accumulates its gradient (the solver zeroes it); a
    // scale from bottom[1] is overwritten.
    Dtype* scale_diff = scale->mutable_cpu_diff();
    if (num_bottoms > 1) cpu_set(scale_dim_, Dtype(0), scale_diff);
    for (int n = 0; n < outer_dim_; ++n) {
      for (int d = 0; d < scale_dim_; ++d) {
        const int offset = (n * scale_dim_ + d) * inner_dim_;
        scale_diff[d] += cpu_dot(inner_dim_, top_diff + offset, bottom_data + offset);
      }
    }
  }
  if (propagate_down[0]) {
    const Dtype* scale_data = scale->cpu_data();
    Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
    for (int n = 0; n < outer_dim_; ++n) {
      for (int d = 0; d < scale_dim_; ++d) {
        const int offset = (n * scale_dim_ + d) * inner_dim_;
        for (int i = 0; i < inner_dim_; ++i) {
          bottom_diff[offset + i] = top_diff[offset + i] * scale_data[d];
        }
      }
    }
  }
}

#ifdef CPU_ONLY
STUB_GPU(ScaleLayer);
#endif

INSTANTIATE_CLASS(ScaleLayer);
REGISTER_LAYER_CLASS(Scale);

}  // namespace crema
