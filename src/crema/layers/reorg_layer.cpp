#include "crema/layers/reorg_layer.hpp"

#include <climits>

namespace crema {

namespace {

// Darknet's map over the bottom's index a = ((n C + c) H + h) W + w: the
// index b it pairs with, in the [N, C / s^2, H s, W s] reading of memory.
inline int64_t PairedIndex(int64_t a, int channels, int height, int width, int stride) {
  const int w = static_cast<int>(a % width);
  const int h = static_cast<int>((a / width) % height);
  const int c = static_cast<int>((a / (static_cast<int64_t>(width) * height)) % channels);
  const int64_t n = a / (static_cast<int64_t>(width) * height * channels);
  const int out_channels = channels / (stride * stride);
  const int c2 = c % out_channels, offset = c / out_channels;
  const int w2 = w * stride + offset % stride, h2 = h * stride + offset / stride;
  return ((n * out_channels + c2) * height * stride + h2) * static_cast<int64_t>(width) * stride +
         w2;
}

// to[a] = from[b] (gather) or to[b] = from[a] (scatter), over every a.
template <typename Dtype>
void Reorganize(const Dtype* from, int64_t count, int channels, int height, int width, int stride,
                bool gather, Dtype* to) {
  for (int64_t a = 0; a < count; ++a) {
    const int64_t b = PairedIndex(a, channels, height, width, stride);
    if (gather) {
      to[a] = from[b];
    } else {
      to[b] = from[a];
    }
  }
}

}  // namespace

template <typename Dtype>
void ReorgLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const ReorgParameter& param = this->layer_param_.reorg_param();
  CREMA_LAYER_REQUIRE(param.has_stride(), "needs reorg_param.stride (the forks have no default)");
  CREMA_LAYER_REQUIRE(param.stride() >= 1 && param.stride() <= 64,
                      "reorg_param.stride must lie in [1, 64], got " << param.stride());
  stride_ = static_cast<int>(param.stride());
  reverse_ = param.reverse();
}

template <typename Dtype>
void ReorgLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4,
                      "needs a 4-D bottom [N, C, H, W], got shape " << bottom[0]->shape_string());
  CREMA_LAYER_REQUIRE(top[0] != bottom[0], "cannot run in place (it moves every value)");
  num_ = bottom[0]->shape(0);
  channels_ = bottom[0]->shape(1);
  height_ = bottom[0]->shape(2);
  width_ = bottom[0]->shape(3);
  const int area = stride_ * stride_;
  CREMA_LAYER_REQUIRE(channels_ % area == 0, "its map needs channels divisible by stride^2 = "
                                                 << area << ", got " << channels_);
  if (reverse_) {
    CREMA_LAYER_REQUIRE(static_cast<int64_t>(height_) * stride_ <= INT_MAX &&
                            static_cast<int64_t>(width_) * stride_ <= INT_MAX,
                        "a top of " << height_ << " x " << width_ << " times " << stride_
                                    << " exceeds " << INT_MAX);
    top[0]->Reshape({num_, channels_ / area, height_ * stride_, width_ * stride_});
    return;
  }
  CREMA_LAYER_REQUIRE(static_cast<int64_t>(channels_) * area <= INT_MAX,
                      channels_ << " channels times " << area << " exceeds " << INT_MAX);
  CREMA_LAYER_REQUIRE(height_ % stride_ == 0 && width_ % stride_ == 0,
                      "height and width must be divisible by the stride "
                          << stride_ << ", got " << height_ << " x " << width_);
  top[0]->Reshape({num_, channels_ * area, height_ / stride_, width_ / stride_});
}

// Darknet calls its map with forward = reverse: without reverse the top
// gathers (top[a] = bottom[b]), with it the top is scattered to.
template <typename Dtype>
void ReorgLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  Reorganize(bottom[0]->cpu_data(), bottom[0]->count(), channels_, height_, width_, stride_,
             !reverse_, top[0]->mutable_cpu_data());
}

template <typename Dtype>
void ReorgLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  Reorganize(top[0]->cpu_diff(), bottom[0]->count(), channels_, height_, width_, stride_, reverse_,
             bottom[0]->mutable_cpu_diff());
}

#ifndef CREMA_CUDA
STUB_GPU(ReorgLayer);
#endif

INSTANTIATE_CLASS(ReorgLayer);
REGISTER_LAYER_CLASS(Reorg);

}  // namespace crema
