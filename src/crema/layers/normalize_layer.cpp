#include "crema/layers/normalize_layer.hpp"

#include <cmath>

#include "crema/filler.hpp"

namespace crema {

template <typename Dtype>
void NormalizeLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const NormalizeParameter& param = this->layer_param_.norm_param();
  across_spatial_ = param.across_spatial();
  channel_shared_ = param.channel_shared();
  CREMA_LAYER_REQUIRE(std::isfinite(param.eps()) && param.eps() >= 0,
                      "eps must be finite and non-negative, got " << param.eps());
  eps_ = param.eps();
  CREMA_LAYER_REQUIRE(
      bottom[0]->num_axes() >= 2,
      "needs a bottom of at least 2 axes (N, C, ...), got " << bottom[0]->shape_string());
  const int channels = bottom[0]->shape(1);
  const int scale_count = channel_shared_ ? 1 : channels;
  if (this->blobs_.empty()) CreateScale(scale_count);
  // A trained scale keeps its stored shape; only its size must fit.
  CREMA_LAYER_REQUIRE(this->blobs_.size() == 1 && this->blobs_[0]->count() == scale_count,
                      "expects one scale blob of "
                          << scale_count << " values ("
                          << (channel_shared_ ? "channel_shared" : "one per channel") << "), found "
                          << this->blobs_.size() << " blobs, the first of shape "
                          << this->blobs_[0]->shape_string());
  this->param_propagate_down_.assign(1, true);
}

template <typename Dtype>
void NormalizeLayer<Dtype>::CreateScale(int count) {
  const NormalizeParameter& param = this->layer_param_.norm_param();
  this->blobs_.emplace_back(new Blob<Dtype>(std::vector<int>{count}));
  FillerParameter filler_param = param.scale_filler();
  if (!param.has_scale_filler()) {
    filler_param.set_type("constant");
    filler_param.set_value(1);
  }
  GetFiller<Dtype>(filler_param)->Fill(this->blobs_[0].get());
}

template <typename Dtype>
void NormalizeLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(
      bottom[0]->num_axes() >= 2,
      "needs a bottom of at least 2 axes (N, C, ...), got " << bottom[0]->shape_string());
  num_ = bottom[0]->shape(0);
  channels_ = bottom[0]->shape(1);
  spatial_ = bottom[0]->count(2);
  CREMA_LAYER_REQUIRE(channel_shared_ || this->blobs_[0]->count() == channels_,
                      "the scale has " << this->blobs_[0]->count() << " values but bottom "
                                       << bottom[0]->shape_string() << " has " << channels_
                                       << " channels");
  if (top[0] != bottom[0]) top[0]->ReshapeLike(*bottom[0]);
  const std::vector<int> norm_shape =
      across_spatial_ ? std::vector<int>{num_} : std::vector<int>{num_, spatial_};
  norms_.Reshape(norm_shape);
  dots_.Reshape(norm_shape);
  if (top[0] == bottom[0]) bottom_copy_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void NormalizeLayer<Dtype>::ComputeNorms(const Dtype* x) {
  Dtype* norms = norms_.mutable_cpu_data();
  cpu_set(norms_.count(), Dtype(0), norms);
  for (int n = 0; n < num_; ++n) {
    for (int c = 0; c < channels_; ++c) {
      const Dtype* plane = x + (n * channels_ + c) * spatial_;
      for (int s = 0; s < spatial_; ++s) norms[NormIndex(n, s)] += plane[s] * plane[s];
    }
  }
  for (int i = 0; i < norms_.count(); ++i) norms[i] = std::sqrt(norms[i] + eps_);
}

template <typename Dtype>
void NormalizeLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const Dtype* x = bottom[0]->cpu_data();
  if (top[0] == bottom[0]) cpu_copy(bottom[0]->count(), x, bottom_copy_.mutable_cpu_data());
  ComputeNorms(x);
  const Dtype* norms = norms_.cpu_data();
  const Dtype* scale = this->blobs_[0]->cpu_data();
  Dtype* y = top[0]->mutable_cpu_data();
  for (int n = 0; n < num_; ++n) {
    for (int c = 0; c < channels_; ++c) {
      const int plane = (n * channels_ + c) * spatial_;
      for (int s = 0; s < spatial_; ++s) {
        y[plane + s] = scale[ScaleIndex(c)] * x[plane + s] / norms[NormIndex(n, s)];
      }
    }
  }
}

template <typename Dtype>
void NormalizeLayer<Dtype>::ComputeScaledDots(const Dtype* x, const Dtype* top_diff,
                                              const Dtype* scale, Dtype* dots) const {
  cpu_set(dots_.count(), Dtype(0), dots);
  for (int n = 0; n < num_; ++n) {
    for (int c = 0; c < channels_; ++c) {
      const int plane = (n * channels_ + c) * spatial_;
      for (int s = 0; s < spatial_; ++s) {
        dots[NormIndex(n, s)] += scale[ScaleIndex(c)] * top_diff[plane + s] * x[plane + s];
      }
    }
  }
}

template <typename Dtype>
void NormalizeLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* x = top[0] == bottom[0] ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  const Dtype* norms = norms_.cpu_data();
  const Dtype* scale = this->blobs_[0]->cpu_data();
  if (this->param_propagate_down_[0]) {
    Dtype* scale_diff = this->blobs_[0]->mutable_cpu_diff();
    for (int n = 0; n < num_; ++n) {
      for (int c = 0; c < channels_; ++c) {
        const int plane = (n * channels_ + c) * spatial_;
        Dtype sum = 0;
        for (int s = 0; s < spatial_; ++s)
          sum += top_diff[plane + s] * x[plane + s] / norms[NormIndex(n, s)];
        scale_diff[ScaleIndex(c)] += sum;
      }
    }
  }
  if (!propagate_down[0]) return;
  Dtype* dots = dots_.mutable_cpu_data();
  ComputeScaledDots(x, top_diff, scale, dots);
  // Written last: in place, bottom_diff is top_diff.
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  for (int n = 0; n < num_; ++n) {
    for (int c = 0; c < channels_; ++c) {
      const int plane = (n * channels_ + c) * spatial_;
      for (int s = 0; s < spatial_; ++s) {
        const Dtype norm = norms[NormIndex(n, s)];
        const Dtype g = scale[ScaleIndex(c)] * top_diff[plane + s];
        bottom_diff[plane + s] =
            g / norm - x[plane + s] * dots[NormIndex(n, s)] / (norm * norm * norm);
      }
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(NormalizeLayer);
#endif

INSTANTIATE_CLASS(NormalizeLayer);
REGISTER_LAYER_CLASS(Normalize);

}  // namespace crema
