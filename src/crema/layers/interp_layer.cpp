#include "crema/layers/interp_layer.hpp"

#include <algorithm>
#include <climits>
#include <vector>

namespace crema {

template <typename Dtype>
void InterpLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const InterpParameter& param = this->layer_param_.interp_param();
  CREMA_LAYER_REQUIRE(param.pad_beg() <= 0 && param.pad_end() <= 0,
                      "pad_beg and pad_end may only crop (be <= 0), got pad_beg "
                          << param.pad_beg() << " and pad_end " << param.pad_end());
  CREMA_LAYER_REQUIRE(!param.has_zoom_factor() || param.zoom_factor() >= 1,
                      "zoom_factor must be at least 1, got " << param.zoom_factor());
  CREMA_LAYER_REQUIRE(!param.has_shrink_factor() || param.shrink_factor() >= 1,
                      "shrink_factor must be at least 1, got " << param.shrink_factor());
  CREMA_LAYER_REQUIRE(bottom.size() == 2 || param.has_zoom_factor() || param.has_shrink_factor() ||
                          (param.has_height() && param.has_width()),
                      "needs the output size: a second bottom, zoom_factor, shrink_factor, "
                      "or both height and width");
  crop_begin_ = -param.pad_beg();
  crop_end_ = -param.pad_end();
}

template <typename Dtype>
int64_t InterpLayer<Dtype>::OutputSizeFromParameters(int in_size, int64_t explicit_size) const {
  const InterpParameter& param = this->layer_param_.interp_param();
  if (!param.has_zoom_factor() && !param.has_shrink_factor()) return explicit_size;
  int64_t size = in_size;
  if (param.has_shrink_factor()) size = (size - 1) / param.shrink_factor() + 1;
  if (param.has_zoom_factor()) size += (size - 1) * (param.zoom_factor() - 1);
  return size;
}

template <typename Dtype>
void InterpLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  const InterpParameter& param = this->layer_param_.interp_param();
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4,
                      "needs a 4-D bottom [N, C, H, W], got shape " << bottom[0]->shape_string());
  num_planes_ = bottom[0]->shape(0) * bottom[0]->shape(1);
  in_height_ = bottom[0]->shape(2);
  in_width_ = bottom[0]->shape(3);
  cropped_height_ = in_height_ - crop_begin_ - crop_end_;
  cropped_width_ = in_width_ - crop_begin_ - crop_end_;
  CREMA_LAYER_REQUIRE(cropped_height_ >= 1 && cropped_width_ >= 1,
                      "cropping " << crop_begin_ << " at the start and " << crop_end_
                                  << " at the end leaves nothing of bottom[0] of shape "
                                  << bottom[0]->shape_string());
  int64_t out_height = 0, out_width = 0;
  if (bottom.size() == 2) {
    CREMA_LAYER_REQUIRE(
        bottom[1]->num_axes() == 4,
        "needs a 4-D bottom[1] to take H, W from, got shape " << bottom[1]->shape_string());
    out_height = bottom[1]->shape(2);
    out_width = bottom[1]->shape(3);
  } else {
    const bool explicit_size = !param.has_zoom_factor() && !param.has_shrink_factor();
    CREMA_LAYER_REQUIRE(
        !explicit_size || (param.height() > 0 && param.width() > 0),
        "height and width must be positive, got " << param.height() << " and " << param.width());
    out_height = OutputSizeFromParameters(cropped_height_, param.height());
    out_width = OutputSizeFromParameters(cropped_width_, param.width());
  }
  CREMA_LAYER_REQUIRE(out_height >= 1 && out_width >= 1,
                      "the output would be " << out_height << " x " << out_width);
  CREMA_LAYER_REQUIRE(out_height <= INT_MAX && out_width <= INT_MAX &&
                          out_height * out_width <= INT_MAX / std::max(num_planes_, 1),
                      "an output of " << num_planes_ << " planes of " << out_height << " x "
                                      << out_width << " exceeds " << INT_MAX << " elements");
  out_height_ = static_cast<int>(out_height);
  out_width_ = static_cast<int>(out_width);
  top[0]->Reshape({bottom[0]->shape(0), bottom[0]->shape(1), out_height_, out_width_});
}

template <typename Dtype>
void InterpLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  const Dtype ratio_h = InterpRatio<Dtype>(cropped_height_, out_height_);
  const Dtype ratio_w = InterpRatio<Dtype>(cropped_width_, out_width_);
  const size_t in_plane = static_cast<size_t>(in_height_) * in_width_;
  const size_t out_plane = static_cast<size_t>(out_height_) * out_width_;
  for (int p = 0; p < num_planes_; ++p) {
    const Dtype* in = bottom[0]->cpu_data() + p * in_plane + CropOffset();
    Dtype* out = top[0]->mutable_cpu_data() + p * out_plane;
    for (int h = 0; h < out_height_; ++h) {
      const InterpTap<Dtype> th = InterpTapAt(h, ratio_h, cropped_height_);
      const Dtype* row0 = in + th.lo * in_width_;
      const Dtype* row1 = row0 + th.step * in_width_;
      for (int w = 0; w < out_width_; ++w) {
        const InterpTap<Dtype> tw = InterpTapAt(w, ratio_w, cropped_width_);
        const Dtype top_row = (1 - tw.frac) * row0[tw.lo] + tw.frac * row0[tw.lo + tw.step];
        const Dtype bottom_row = (1 - tw.frac) * row1[tw.lo] + tw.frac * row1[tw.lo + tw.step];
        out[h * out_width_ + w] = (1 - th.frac) * top_row + th.frac * bottom_row;
      }
    }
  }
}

// Each output's gradient goes back to its four taps with the forward
// weights; the cropped-away inputs get none.
template <typename Dtype>
void InterpLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  cpu_set(bottom[0]->count(), Dtype(0), bottom[0]->mutable_cpu_diff());
  const Dtype ratio_h = InterpRatio<Dtype>(cropped_height_, out_height_);
  const Dtype ratio_w = InterpRatio<Dtype>(cropped_width_, out_width_);
  const size_t in_plane = static_cast<size_t>(in_height_) * in_width_;
  const size_t out_plane = static_cast<size_t>(out_height_) * out_width_;
  for (int p = 0; p < num_planes_; ++p) {
    Dtype* in = bottom[0]->mutable_cpu_diff() + p * in_plane + CropOffset();
    const Dtype* out = top[0]->cpu_diff() + p * out_plane;
    for (int h = 0; h < out_height_; ++h) {
      const InterpTap<Dtype> th = InterpTapAt(h, ratio_h, cropped_height_);
      Dtype* row0 = in + th.lo * in_width_;
      Dtype* row1 = row0 + th.step * in_width_;
      for (int w = 0; w < out_width_; ++w) {
        const InterpTap<Dtype> tw = InterpTapAt(w, ratio_w, cropped_width_);
        const Dtype g = out[h * out_width_ + w];
        row0[tw.lo] += (1 - th.frac) * (1 - tw.frac) * g;
        row0[tw.lo + tw.step] += (1 - th.frac) * tw.frac * g;
        row1[tw.lo] += th.frac * (1 - tw.frac) * g;
        row1[tw.lo + tw.step] += th.frac * tw.frac * g;
      }
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(InterpLayer);
#endif

INSTANTIATE_CLASS(InterpLayer);
REGISTER_LAYER_CLASS(Interp);

}  // namespace crema
