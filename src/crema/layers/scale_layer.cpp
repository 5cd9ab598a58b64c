#include "crema/layers/scale_layer.hpp"

#include <algorithm>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/learned_blobs.hpp"
#include "crema/util/thread_pool.hpp"

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
  this->blobs_.resize(1);
  this->blobs_[0].reset(
      new Blob<Dtype>(AxesShape(*this, *bottom[0], param.axis(), param.num_axes())));
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
  // Per (outer, scale) plane sums: the scale's and the bias's partials.
  partial_sums_.Reshape({2, outer_dim_ * scale_dim_});
  ones_.Reshape({std::max(outer_dim_, inner_dim_)});
  if (bias_layer_) {
    bias_bottom_vec_[0] = top[0];
    bias_layer_->Reshape(bias_bottom_vec_, top);
  }
}

template <typename Dtype>
bool ScaleLayer<Dtype>::ScalesChannelsOf(const Blob<Dtype>& bottom) const {
  return !this->blobs_.empty() && this->blobs_[0]->num_axes() == 1 && bottom.num_axes() >= 2 &&
         outer_dim_ == bottom.shape(0) && scale_dim_ == bottom.shape(1) &&
         this->layer_param_.scale_param().axis() == 1;
}

template <typename Dtype>
void ScaleLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>* bias = BiasBlob();
  AffinePlanes_cpu(bottom[0]->cpu_data(), top[0]->mutable_cpu_data(),
                   bottom[0] == top[0] ? bottom_copy_.mutable_cpu_data() : nullptr, nullptr,
                   nullptr, ScaleBlob(bottom)->cpu_data(), bias ? bias->cpu_data() : nullptr);
}

// One pass, planes split over the pool: the copy kept for an in-place
// backward, the scale and the bias (the bias layer's own body adds the same
// value after the product; here it is added in the same pass).
template <typename Dtype>
void ScaleLayer<Dtype>::AffinePlanes_cpu(const Dtype* bottom_data, Dtype* top_data, Dtype* copy,
                                         const Dtype* mean, const Dtype* std, const Dtype* scale,
                                         const Dtype* bias) {
  ParallelForPlanes(outer_dim_ * scale_dim_, inner_dim_, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      const int d = plane % scale_dim_;
      const size_t offset = static_cast<size_t>(plane) * inner_dim_;
      const Dtype* x = bottom_data + offset;
      Dtype* y = top_data + offset;
      if (copy) std::copy(x, x + inner_dim_, copy + offset);
      const Dtype b = bias ? bias[d] : Dtype(0);
      if (mean) {
        const Dtype m = mean[d], s = scale[d] / std[d];
        for (int i = 0; i < inner_dim_; ++i) y[i] = (x[i] - m) * s + b;
      } else if (bias) {
        const Dtype s = scale[d];
        for (int i = 0; i < inner_dim_; ++i) y[i] = x[i] * s + b;
      } else {
        const Dtype s = scale[d];
        for (int i = 0; i < inner_dim_; ++i) y[i] = x[i] * s;
      }
    }
  });
}

namespace {

// One plane of the backward pass in one sweep: the sum of dy, its dot with
// x - m, and dx = dy * s. dx may be dy itself (in place): each element is
// read before it is written.
template <typename Dtype>
void PlaneBackward(int n, const Dtype* dy, const Dtype* x, Dtype m, Dtype s, Dtype* dx, Dtype* sum,
                   Dtype* dot) {
  Dtype sum_lanes[8] = {}, dot_lanes[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) {
      const Dtype g = dy[i + k];
      sum_lanes[k] += g;
      dot_lanes[k] += g * (x[i + k] - m);
      dx[i + k] = g * s;
    }
  }
  Dtype total = 0, product = 0;
  for (; i < n; ++i) {
    const Dtype g = dy[i];
    total += g;
    product += g * (x[i] - m);
    dx[i] = g * s;
  }
  for (int k = 0; k < 8; ++k) {
    total += sum_lanes[k];
    product += dot_lanes[k];
  }
  *sum = total;
  *dot = product;
}

}  // namespace

template <typename Dtype>
bool ScaleLayer<Dtype>::ScaleGradientWanted(const std::vector<bool>& propagate_down,
                                            int num_bottoms) const {
  return num_bottoms > 1 ? propagate_down[1] : this->param_propagate_down(0);
}

template <typename Dtype>
void ScaleLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  AffineBackward_cpu(top, propagate_down, bottom, nullptr, nullptr, false);
}

// One pass over the planes (split over the pool) for the three gradients:
// each plane's sums of dy (the bias's) and of dy * x (the scale's), and
// dx = dy * scale; the plane sums are then added up image by image.
template <typename Dtype>
void ScaleLayer<Dtype>::AffineBackward_cpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom,
                                           const Dtype* mean, const Dtype* std,
                                           bool bottom_through_std) {
  const int num_bottoms = static_cast<int>(bottom.size());
  const bool bias_wanted = bias_layer_ && this->param_propagate_down(bias_param_id_);
  const bool scale_wanted = ScaleGradientWanted(propagate_down, num_bottoms);
  if (!bias_wanted && !scale_wanted && !propagate_down[0]) return;
  const Dtype* scale = ScaleBlob(bottom)->cpu_data();
  plane_factors_.resize(scale_dim_);
  for (int d = 0; d < scale_dim_; ++d) {
    plane_factors_[d] = bottom_through_std ? scale[d] / std[d] : scale[d];
  }
  const Dtype* bottom_data = bottom[0] == top[0] ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  // In place, bottom_diff is top_diff: each element is read before written.
  BackwardPlanes_cpu(top[0]->cpu_diff(), bottom_data, mean, bias_wanted || scale_wanted,
                     propagate_down[0] ? bottom[0]->mutable_cpu_diff() : nullptr);
  AccumulateParamDiffs_cpu(bottom, mean ? std : nullptr, scale_wanted, bias_wanted);
}

template <typename Dtype>
void ScaleLayer<Dtype>::BackwardPlanes_cpu(const Dtype* top_diff, const Dtype* bottom_data,
                                           const Dtype* mean, bool sums_wanted,
                                           Dtype* bottom_diff) {
  const int planes = outer_dim_ * scale_dim_;
  Dtype* dy_sums = partial_sums_.mutable_cpu_data();
  Dtype* dy_x_sums = dy_sums + planes;
  ParallelForPlanes(planes, inner_dim_, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      const int d = plane % scale_dim_;
      const size_t offset = static_cast<size_t>(plane) * inner_dim_;
      const Dtype* dy = top_diff + offset;
      const Dtype s = plane_factors_[d];
      const Dtype m = mean ? mean[d] : Dtype(0);
      if (sums_wanted && bottom_diff) {  // the usual case, in one sweep
        PlaneBackward(inner_dim_, dy, bottom_data + offset, m, s, bottom_diff + offset,
                      &dy_sums[plane], &dy_x_sums[plane]);
        continue;
      }
      if (sums_wanted) {
        plane_sum_and_dot(inner_dim_, dy, bottom_data + offset, &dy_sums[plane], &dy_x_sums[plane],
                          m);
      }
      if (bottom_diff) {
        Dtype* dx = bottom_diff + offset;
        for (int i = 0; i < inner_dim_; ++i) dx[i] = dy[i] * s;
      }
    }
  });
}

// A learned blob accumulates its gradient (the solver zeroes it); a scale
// from bottom[1] is overwritten.
template <typename Dtype>
void ScaleLayer<Dtype>::AccumulateParamDiffs_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                 const Dtype* std, bool scale_wanted,
                                                 bool bias_wanted) {
  const int planes = outer_dim_ * scale_dim_;
  const Dtype* dy_sums = partial_sums_.cpu_data();
  const Dtype* dy_x_sums = dy_sums + planes;
  if (scale_wanted) {
    Dtype* scale_diff = ScaleBlob(bottom)->mutable_cpu_diff();
    if (bottom.size() > 1) cpu_set(scale_dim_, Dtype(0), scale_diff);
    for (int n = 0; n < outer_dim_; ++n) {
      for (int d = 0; d < scale_dim_; ++d) {
        const Dtype dot = dy_x_sums[n * scale_dim_ + d];
        scale_diff[d] += std ? dot / std[d] : dot;
      }
    }
  }
  if (bias_wanted) {
    Dtype* bias_diff = this->blobs_[bias_param_id_]->mutable_cpu_diff();
    for (int n = 0; n < outer_dim_; ++n) {
      for (int d = 0; d < scale_dim_; ++d) bias_diff[d] += dy_sums[n * scale_dim_ + d];
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ScaleLayer);
#endif

INSTANTIATE_CLASS(ScaleLayer);
REGISTER_LAYER_CLASS(Scale);

}  // namespace crema
