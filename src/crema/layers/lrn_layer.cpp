#include "crema/layers/lrn_layer.hpp"

#include <algorithm>
#include <vector>

#include "crema/util/thread_pool.hpp"

namespace crema {

template <typename Dtype>
void LRNLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& /*bottom*/,
                                 const std::vector<Blob<Dtype>*>& /*top*/) {
  const LRNParameter& param = this->layer_param_.lrn_param();
  local_size_ = static_cast<int>(param.local_size());
  CREMA_LAYER_REQUIRE(local_size_ > 0 && local_size_ % 2 == 1,
                      "local_size must be a positive odd number (the window is centred), got "
                          << param.local_size());
  half_size_ = (local_size_ - 1) / 2;
  alpha_ = param.alpha();
  beta_ = param.beta();
  if (across_channels()) {
    offset_ = param.k();
    window_alpha_ = alpha_ / local_size_;
  } else {
    // Caffe builds this region from AVE pooling (whose divisor counts the
    // padding, so always local_size^2) and a power layer with shift 1.
    offset_ = 1;
    window_alpha_ = alpha_ / (local_size_ * local_size_);
  }
}

template <typename Dtype>
void LRNLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                              const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4,
                      "expects a 4-D bottom (num, channels, height, width), got shape "
                          << bottom[0]->shape_string());
  CREMA_LAYER_REQUIRE(top[0] != bottom[0], "cannot compute in place: give the top its own blob");
  num_ = bottom[0]->num();
  channels_ = bottom[0]->channels();
  height_ = bottom[0]->height();
  width_ = bottom[0]->width();
  top[0]->ReshapeLike(*bottom[0]);
  scale_.ReshapeLike(*bottom[0]);
  power_.ReshapeLike(*bottom[0]);
  work_.ReshapeLike(*bottom[0]);
  work_window_sum_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
template <bool kSquares>
void LRNLayer<Dtype>::ChannelWindowSumCpu(const Dtype* values, int plane, Dtype* out) const {
  const int plane_size = height_ * width_;
  const int c = plane % channels_;
  const Dtype* image = values + static_cast<size_t>(plane - c) * plane_size;
  std::fill(out, out + plane_size, Dtype(0));
  const int first = std::max(c - half_size_, 0);
  const int last = std::min(c + half_size_, channels_ - 1);
  for (int other = first; other <= last; ++other) {
    const Dtype* in = image + static_cast<size_t>(other) * plane_size;
    for (int i = 0; i < plane_size; ++i) out[i] += kSquares ? in[i] * in[i] : in[i];
  }
}

template <typename Dtype>
void LRNLayer<Dtype>::WindowSumCpu(const Dtype* values, Dtype* window_sum) const {
  const int plane_size = height_ * width_;
  // Every output plane is its own sum: the planes split over the pool.
  ParallelForPlanes(num_ * channels_, plane_size, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      Dtype* out = window_sum + static_cast<size_t>(plane) * plane_size;
      if (across_channels()) {
        ChannelWindowSumCpu<false>(values, plane, out);
        continue;
      }
      const Dtype* in = values + static_cast<size_t>(plane) * plane_size;
      for (int h = 0; h < height_; ++h) {
        for (int w = 0; w < width_; ++w) {
          Dtype sum = 0;
          for (int y = std::max(h - half_size_, 0); y <= std::min(h + half_size_, height_ - 1);
               ++y) {
            for (int x = std::max(w - half_size_, 0); x <= std::min(w + half_size_, width_ - 1);
                 ++x) {
              sum += in[y * width_ + x];
            }
          }
          out[h * width_ + w] = sum;
        }
      }
    }
  });
}

template <typename Dtype>
void LRNLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  if (across_channels()) {
    ForwardAcrossChannelsCpu(*bottom[0], top[0]);
    return;
  }
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* scale = scale_.mutable_cpu_data();
  cpu_sqr(count, bottom_data, work_.mutable_cpu_data());
  WindowSumCpu(work_.cpu_data(), scale);
  cpu_scal(count, window_alpha_, scale);
  cpu_add_scalar(count, offset_, scale);
  Dtype* power = power_.mutable_cpu_data();
  cpu_powx(count, scale_.cpu_data(), -beta_, power);
  cpu_mul(count, power, bottom_data, top[0]->mutable_cpu_data());
}

// The across-channels forward in one pass per output plane (the separate
// passes of the general path each stream the whole blob through memory):
// scale = k + alpha / n * (the window's sum of squares), top = x * scale^-beta,
// with the same operations in the same order as the general path.
template <typename Dtype>
void LRNLayer<Dtype>::ForwardAcrossChannelsCpu(const Blob<Dtype>& bottom, Blob<Dtype>* top) {
  const int plane_size = height_ * width_;
  const Dtype* bottom_data = bottom.cpu_data();
  Dtype* scale_data = scale_.mutable_cpu_data();
  Dtype* power_data = power_.mutable_cpu_data();
  Dtype* top_data = top->mutable_cpu_data();
  // Locals, not the layer's fields: the loop's stores could alias those, and
  // the compiler would keep the loop scalar, reloading them at every value.
  const Dtype alpha = window_alpha_, offset = offset_, exponent = -beta_;
  ParallelForPlanes(num_ * channels_, plane_size, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      const size_t plane_offset = static_cast<size_t>(plane) * plane_size;
      Dtype* __restrict scale = scale_data + plane_offset;
      ChannelWindowSumCpu<true>(bottom_data, plane, scale);
      const Dtype* __restrict x = bottom_data + plane_offset;
      Dtype* __restrict power = power_data + plane_offset;
      Dtype* __restrict y = top_data + plane_offset;
      for (int i = 0; i < plane_size; ++i) scale[i] = scale[i] * alpha + offset;
      plane_powx(plane_size, scale, exponent, power);
      for (int i = 0; i < plane_size; ++i) y[i] = power[i] * x[i];
    }
  });
}

// dL/dx_j = g_j * scale_j^-beta
//         - 2 * alpha' * beta * x_j * sum over the window of j of g_i * y_i / scale_i,
// since the windows are symmetric (i's window holds j exactly when j's holds i).
// scale^-beta is the forward pass's (power_).
template <typename Dtype>
void LRNLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  if (across_channels()) {
    BackwardAcrossChannelsCpu(*top[0], bottom[0]);
    return;
  }
  const int count = bottom[0]->count();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* ratio = work_.mutable_cpu_data();
  cpu_mul(count, top_diff, top[0]->cpu_data(), ratio);
  cpu_div(count, ratio, scale_.cpu_data(), ratio);
  Dtype* ratio_sum = work_window_sum_.mutable_cpu_data();
  WindowSumCpu(ratio, ratio_sum);
  cpu_mul(count, ratio_sum, bottom[0]->cpu_data(), ratio_sum);

  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_mul(count, power_.cpu_data(), top_diff, bottom_diff);
  cpu_axpy(count, Dtype(-2) * window_alpha_ * beta_, ratio_sum, bottom_diff);
}

// The general path's formula per plane: the ratios of every plane first
// (each output plane's window reads its neighbours'), then each plane's
// window sum and gradient while the plane is in cache (the general path
// streams the whole blob through memory six times).
template <typename Dtype>
void LRNLayer<Dtype>::BackwardAcrossChannelsCpu(const Blob<Dtype>& top, Blob<Dtype>* bottom) {
  const int plane_size = height_ * width_;
  const int planes = num_ * channels_;
  const Dtype* top_diff = top.cpu_diff();
  const Dtype* top_data = top.cpu_data();
  const Dtype* scale_data = scale_.cpu_data();
  Dtype* ratio_data = work_.mutable_cpu_data();
  ParallelForPlanes(planes, plane_size, [&](int begin, int end) {
    const size_t first = static_cast<size_t>(begin) * plane_size;
    const size_t last = static_cast<size_t>(end) * plane_size;
    for (size_t i = first; i < last; ++i) {
      ratio_data[i] = top_diff[i] * top_data[i] / scale_data[i];
    }
  });
  const Dtype* bottom_data = bottom->cpu_data();
  const Dtype* power_data = power_.cpu_data();
  Dtype* ratio_sum_data = work_window_sum_.mutable_cpu_data();
  Dtype* bottom_diff = bottom->mutable_cpu_diff();
  const Dtype coefficient = Dtype(-2) * window_alpha_ * beta_;
  ParallelForPlanes(planes, plane_size, [&](int begin, int end) {
    for (int plane = begin; plane < end; ++plane) {
      const size_t offset = static_cast<size_t>(plane) * plane_size;
      Dtype* ratio_sum = ratio_sum_data + offset;
      ChannelWindowSumCpu<false>(ratio_data, plane, ratio_sum);
      const Dtype* x = bottom_data + offset;
      const Dtype* power = power_data + offset;
      const Dtype* g = top_diff + offset;
      Dtype* dx = bottom_diff + offset;
      for (int i = 0; i < plane_size; ++i) {
        dx[i] = power[i] * g[i] + coefficient * (ratio_sum[i] * x[i]);
      }
    }
  });
}

#ifndef CREMA_CUDA
STUB_GPU(LRNLayer);
#endif

INSTANTIATE_CLASS(LRNLayer);
REGISTER_LAYER_CLASS(LRN);

}  // namespace crema
