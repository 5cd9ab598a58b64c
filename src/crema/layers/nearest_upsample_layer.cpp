#include "crema/layers/nearest_upsample_layer.hpp"

#include <climits>

namespace crema {

template <typename Dtype>
bool NearestUpsampleLayer<Dtype>::IsYoloForm(const LayerParameter& param) {
  const UpsampleParameter& p = param.upsample_param();
  return param.bottom_size() == 1 && !p.has_scale_h() && !p.has_scale_w() && !p.has_pad_out_h() &&
         !p.has_pad_out_w() && !p.has_upsample_h() && !p.has_upsample_w();
}

template <typename Dtype>
void NearestUpsampleLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>& top) {
  const uint32_t scale = this->layer_param_.upsample_param().scale();
  CREMA_LAYER_REQUIRE(scale >= 1 && scale <= 4096,
                      "upsample_param.scale must lie in [1, 4096], got " << scale);
  scale_ = static_cast<int>(scale);
}

template <typename Dtype>
void NearestUpsampleLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4,
                      "needs a 4-D bottom [N, C, H, W], got shape " << bottom[0]->shape_string());
  CREMA_LAYER_REQUIRE(top[0] != bottom[0], "cannot run in place (the top is larger)");
  planes_ = bottom[0]->shape(0) * bottom[0]->shape(1);
  height_ = bottom[0]->shape(2);
  width_ = bottom[0]->shape(3);
  // Each axis too: an empty batch has no values but may have long axes.
  const int64_t out_height = static_cast<int64_t>(height_) * scale_;
  const int64_t out_width = static_cast<int64_t>(width_) * scale_;
  const int64_t out = static_cast<int64_t>(bottom[0]->count()) * scale_ * scale_;
  CREMA_LAYER_REQUIRE(out <= INT_MAX && out_height <= INT_MAX && out_width <= INT_MAX,
                      "an output of " << out_height << " x " << out_width << " planes (" << out
                                      << " values) exceeds " << INT_MAX);
  top[0]->Reshape({bottom[0]->shape(0), bottom[0]->shape(1), height_ * scale_, width_ * scale_});
}

template <typename Dtype>
void NearestUpsampleLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  const Dtype* in = bottom[0]->cpu_data();
  Dtype* out = top[0]->mutable_cpu_data();
  const int out_width = width_ * scale_;
  for (int p = 0; p < planes_; ++p) {
    for (int h = 0; h < height_ * scale_; ++h) {
      const Dtype* row = in + (static_cast<size_t>(p) * height_ + h / scale_) * width_;
      Dtype* out_row = out + (static_cast<size_t>(p) * height_ * scale_ + h) * out_width;
      for (int w = 0; w < out_width; ++w) out_row[w] = row[w / scale_];
    }
  }
}

template <typename Dtype>
void NearestUpsampleLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int out_width = width_ * scale_;
  for (int p = 0; p < planes_; ++p) {
    for (int h = 0; h < height_; ++h) {
      for (int w = 0; w < width_; ++w) {
        Dtype sum = 0;
        for (int i = 0; i < scale_; ++i) {
          const Dtype* block =
              top_diff + (static_cast<size_t>(p) * height_ * scale_ + h * scale_ + i) * out_width +
              w * scale_;
          for (int j = 0; j < scale_; ++j) sum += block[j];
        }
        bottom_diff[(static_cast<size_t>(p) * height_ + h) * width_ + w] = sum;
      }
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(NearestUpsampleLayer);
#endif

INSTANTIATE_CLASS(NearestUpsampleLayer);

}  // namespace crema
