#include "crema/layers/bn_layer.hpp"

#include <cmath>
#include <vector>

#include "crema/filler.hpp"
#include "crema/util/math_functions.hpp"
#include "crema/util/thread_pool.hpp"

namespace crema {

namespace {

// The SegNet fork's fixed variance epsilon (its schema has no eps field).
constexpr double kSegNetEps = 1e-9;

// A constant filler (the default of slope and scale is 1, of bias and shift 0).
FillerParameter ConstantFiller(float value) {
  FillerParameter filler;
  filler.set_type("constant");
  filler.set_value(value);
  return filler;
}

}  // namespace

template <typename Dtype>
void BNLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  const BNParameter& param = this->layer_param_.bn_param();
  segnet_ = param.has_scale_filler() || param.has_shift_filler() || param.has_bn_mode();
  batch_statistics_ =
      segnet_ ? param.bn_mode() == BNParameter::LEARN : this->phase_ == TRAIN && !param.frozen();
  momentum_ = param.momentum();
  eps_ = segnet_ && !param.has_eps() ? Dtype(kSegNetEps) : Dtype(param.eps());
  CREMA_LAYER_REQUIRE(param.momentum() >= 0 && param.momentum() <= 1,
                      "momentum must lie in [0, 1], got " << param.momentum());
  CREMA_LAYER_REQUIRE(param.eps() >= 0, "eps must be non-negative, got " << param.eps());
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() >= 2,
                      "needs a bottom [N, C, ...], got shape " << bottom[0]->shape_string());
  channels_ = bottom[0]->shape(1);
  SetUpBlobs();
  if (!segnet_) PinParamSpecs();
}

template <typename Dtype>
void BNLayer<Dtype>::SetUpBlobs() {
  const BNParameter& param = this->layer_param_.bn_param();
  const size_t blob_count = segnet_ ? 2 : 4;
  const char* names = segnet_ ? "scale, shift" : "slope, bias, mean, variance";
  if (!this->blobs_.empty()) {
    // Loaded with trained weights.
    CREMA_LAYER_REQUIRE(this->blobs_.size() == blob_count, "needs " << blob_count << " blobs ("
                                                                    << names << "), got "
                                                                    << this->blobs_.size());
    for (const auto& blob : this->blobs_) {
      CREMA_LAYER_REQUIRE(blob->count() == channels_,
                          "blob of shape " << blob->shape_string() << " does not fit " << channels_
                                           << " channels (" << names << ")");
    }
    return;
  }
  const std::vector<int> shape{1, channels_, 1, 1};
  for (size_t i = 0; i < blob_count; ++i) this->blobs_.emplace_back(new Blob<Dtype>(shape));
  const bool has_a = segnet_ ? param.has_scale_filler() : param.has_slope_filler();
  const bool has_b = segnet_ ? param.has_shift_filler() : param.has_bias_filler();
  const FillerParameter& a = segnet_ ? param.scale_filler() : param.slope_filler();
  const FillerParameter& b = segnet_ ? param.shift_filler() : param.bias_filler();
  GetFiller<Dtype>(has_a ? a : ConstantFiller(1))->Fill(this->blobs_[0].get());
  GetFiller<Dtype>(has_b ? b : ConstantFiller(0))->Fill(this->blobs_[1].get());
  if (segnet_) return;
  cpu_set(channels_, Dtype(0), this->blobs_[2]->mutable_cpu_data());
  cpu_set(channels_, Dtype(1), this->blobs_[3]->mutable_cpu_data());
}

// The forks set these specs whatever the prototxt says; a user's non-zero
// lr_mult is overridden the same way, with a warning, so their files run
// unchanged.
template <typename Dtype>
void BNLayer<Dtype>::PinParamSpec(int index, const char* what) {
  LayerParameter& layer_param = this->layer_param_;
  while (layer_param.param_size() <= index) layer_param.add_param();
  ParamSpec* spec = layer_param.mutable_param(index);
  LOG_IF(WARNING, spec->has_lr_mult() && spec->lr_mult() != 0)
      << "BN layer '" << layer_param.name() << "': param " << index << " (" << what
      << ") set to lr_mult 0 and decay_mult 0, as the forks do";
  spec->set_lr_mult(0);
  spec->set_decay_mult(0);
}

template <typename Dtype>
void BNLayer<Dtype>::PinParamSpecs() {
  CREMA_LAYER_REQUIRE(this->layer_param_.param_size() <= 4,
                      "has " << this->layer_param_.param_size()
                             << " param specs but only 4 blobs (slope, bias, mean, variance)");
  if (this->layer_param_.bn_param().frozen()) {
    PinParamSpec(0, "slope, frozen");
    PinParamSpec(1, "bias, frozen");
  }
  PinParamSpec(2, "the running mean");
  PinParamSpec(3, "the running variance");
  this->set_param_propagate_down(2, false);
  this->set_param_propagate_down(3, false);
}

template <typename Dtype>
void BNLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                             const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() >= 2 && bottom[0]->shape(1) == channels_,
                      "was set up for " << channels_ << " channels, but bottom[0] has shape "
                                        << bottom[0]->shape_string());
  num_ = bottom[0]->shape(0);
  spatial_dim_ = bottom[0]->count(2);
  if (top[0] != bottom[0]) top[0]->ReshapeLike(*bottom[0]);
  x_norm_.ReshapeLike(*bottom[0]);
  for (Blob<Dtype>* blob :
       {&mean_, &inv_std_, &variance_, &mean_top_diff_, &mean_top_diff_x_norm_}) {
    blob->Reshape({channels_});
  }
}

template <typename Dtype>
void BNLayer<Dtype>::ChannelSums_cpu(const Dtype* a, const Dtype* b, Dtype scale,
                                     Dtype* sums) const {
  if (b) {
    ChannelSumsAndDots_cpu(a, b, scale, nullptr, sums);
  } else {
    ChannelSumsAndDots_cpu(a, nullptr, scale, sums, nullptr);
  }
}

// Channels split over the pool; each sums its planes image by image.
template <typename Dtype>
void BNLayer<Dtype>::ChannelSumsAndDots_cpu(const Dtype* a, const Dtype* b, Dtype scale,
                                            Dtype* sums, Dtype* dots) const {
  ParallelForPlanes(channels_, ValuesPerChannel(), [&](int begin, int end) {
    for (int c = begin; c < end; ++c) {
      Dtype sum = 0, dot = 0;
      for (int n = 0; n < num_; ++n) {
        if (b) {
          Dtype plane_total, plane_dot;
          plane_sum_and_dot(spatial_dim_, Plane(a, n, c), Plane(b, n, c), &plane_total,
                            &plane_dot);
          sum += plane_total;
          dot += plane_dot;
        } else {
          sum += plane_sum(spatial_dim_, Plane(a, n, c));
        }
      }
      if (sums) sums[c] = sum * scale;
      if (dots) dots[c] = dot * scale;
    }
  });
}

// Calls fn(channel, offset) for each (image, channel) plane, the planes split
// over the pool; offset is the plane's first element.
template <typename Dtype>
template <typename Fn>
void BNLayer<Dtype>::ForEachPlane(const Fn& fn) const {
  ParallelForPlanes(num_ * channels_, spatial_dim_, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      fn(plane % channels_, static_cast<size_t>(plane) * spatial_dim_);
    }
  });
}

template <typename Dtype>
void BNLayer<Dtype>::Centre_cpu(const Dtype* bottom_data) {
  const Dtype* mean = mean_.cpu_data();
  Dtype* x_norm = x_norm_.mutable_cpu_data();
  ForEachPlane([&](int c, size_t offset) {
    for (int s = 0; s < spatial_dim_; ++s) x_norm[offset + s] = bottom_data[offset + s] - mean[c];
  });
}

template <typename Dtype>
void BNLayer<Dtype>::BatchStatistics_cpu(const Dtype* bottom_data) {
  const Dtype per_value = Dtype(1) / ValuesPerChannel();
  ChannelSums_cpu(bottom_data, nullptr, per_value, mean_.mutable_cpu_data());
  Centre_cpu(bottom_data);
  ChannelSums_cpu(x_norm_.cpu_data(), x_norm_.cpu_data(), per_value, variance_.mutable_cpu_data());
  const Dtype* variance = variance_.cpu_data();
  Dtype* inv_std = inv_std_.mutable_cpu_data();
  for (int c = 0; c < channels_; ++c) inv_std[c] = 1 / std::sqrt(variance[c] + eps_);
  if (segnet_) return;
  cpu_axpby(channels_, 1 - momentum_, mean_.cpu_data(), momentum_,
            this->blobs_[2]->mutable_cpu_data());
  cpu_axpby(channels_, 1 - momentum_, variance, momentum_, this->blobs_[3]->mutable_cpu_data());
}

template <typename Dtype>
void BNLayer<Dtype>::FixedStatistics_cpu() {
  Dtype* mean = mean_.mutable_cpu_data();
  Dtype* inv_std = inv_std_.mutable_cpu_data();
  if (segnet_) {
    cpu_set(channels_, Dtype(0), mean);
    cpu_set(channels_, Dtype(1), inv_std);
    return;
  }
  cpu_copy(channels_, this->blobs_[2]->cpu_data(), mean);
  const Dtype* variance = this->blobs_[3]->cpu_data();
  for (int c = 0; c < channels_; ++c) inv_std[c] = 1 / std::sqrt(variance[c] + eps_);
}

template <typename Dtype>
void BNLayer<Dtype>::ScaleAndShift_cpu(Dtype* top_data) {
  const Dtype* inv_std = inv_std_.cpu_data();
  const Dtype* a = this->blobs_[0]->cpu_data();
  const Dtype* b = this->blobs_[1]->cpu_data();
  Dtype* x_norm = x_norm_.mutable_cpu_data();
  ForEachPlane([&](int c, size_t offset) {
    for (int s = 0; s < spatial_dim_; ++s) {
      const size_t i = offset + s;
      x_norm[i] *= inv_std[c];
      top_data[i] = a[c] * x_norm[i] + b[c];
    }
  });
}

template <typename Dtype>
void BNLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  if (batch_statistics_) {
    BatchStatistics_cpu(bottom_data);
  } else {
    FixedStatistics_cpu();
    Centre_cpu(bottom_data);
  }
  // In place, x is read (above) before y is written.
  ScaleAndShift_cpu(top[0]->mutable_cpu_data());
}

// With y = a * x_norm + b: da = sum(dy * x_norm), db = sum(dy). With batch
// statistics the mean and variance depend on every input too:
//   dx = a * r * (dy - mean(dy) - x_norm * mean(dy * x_norm)),
// means per channel; with fixed statistics dx = a * r * dy.
template <typename Dtype>
void BNLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->cpu_diff();
  const Dtype* x_norm = x_norm_.cpu_data();
  const Dtype values = ValuesPerChannel();
  Dtype* mean_dy = mean_top_diff_.mutable_cpu_data();
  Dtype* mean_dy_x = mean_top_diff_x_norm_.mutable_cpu_data();
  ChannelSumsAndDots_cpu(top_diff, x_norm, 1 / values, mean_dy, mean_dy_x);
  if (this->param_propagate_down(0)) {
    cpu_axpy(channels_, values, mean_dy_x, this->blobs_[0]->mutable_cpu_diff());
  }
  if (this->param_propagate_down(1)) {
    cpu_axpy(channels_, values, mean_dy, this->blobs_[1]->mutable_cpu_diff());
  }
  if (!propagate_down[0]) return;
  const Dtype* a = this->blobs_[0]->cpu_data();
  const Dtype* inv_std = inv_std_.cpu_data();
  const Dtype batch = batch_statistics_ ? 1 : 0;
  // In place, bottom_diff is top_diff: each element is read before written.
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  ForEachPlane([&](int c, size_t offset) {
    const Dtype gain = a[c] * inv_std[c];
    for (int s = 0; s < spatial_dim_; ++s) {
      const size_t i = offset + s;
      bottom_diff[i] = gain * (top_diff[i] - batch * (mean_dy[c] + x_norm[i] * mean_dy_x[c]));
    }
  });
}

#ifndef CREMA_CUDA
STUB_GPU(BNLayer);
#endif

INSTANTIATE_CLASS(BNLayer);
REGISTER_LAYER_CLASS(BN);

}  // namespace crema
