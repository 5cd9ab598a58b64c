#include "crema/layers/upsample_layer.hpp"

#include <algorithm>
#include <climits>
#include <memory>
#include <vector>

#include "crema/layer_factory.hpp"
#include "crema/layers/nearest_upsample_layer.hpp"

namespace crema {

template <typename Dtype>
void UpsampleLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const UpsampleParameter& param = this->layer_param_.upsample_param();
  const uint32_t scale_h = param.has_scale_h() ? param.scale_h() : param.scale();
  const uint32_t scale_w = param.has_scale_w() ? param.scale_w() : param.scale();
  CREMA_LAYER_REQUIRE(HasExplicitSize() || (scale_h >= 1 && scale_w >= 1),
                      "the scales (scale_h and scale_w, else scale) must be positive, got "
                          << scale_h << " and " << scale_w);
  bad_mask_flag_.Reshape({1});
}

template <typename Dtype>
int64_t UpsampleLayer<Dtype>::OutputSize(int in_size, bool has_explicit, uint32_t explicit_size,
                                         uint32_t scale, bool pad_out) {
  if (has_explicit) return explicit_size;
  return static_cast<int64_t>(in_size) * scale - (pad_out ? 1 : 0);
}

template <typename Dtype>
void UpsampleLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const UpsampleParameter& param = this->layer_param_.upsample_param();
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4, "needs a 4-D bottom[0] [N, C, H, W], got shape "
                                                      << bottom[0]->shape_string());
  CREMA_LAYER_REQUIRE(bottom[1]->shape() == bottom[0]->shape(),
                      "the mask (bottom[1]) of shape " << bottom[1]->shape_string()
                                                       << " must have the data's shape "
                                                       << bottom[0]->shape_string());
  const int height = bottom[0]->shape(2), width = bottom[0]->shape(3);
  const int64_t out_height =
      OutputSize(height, HasExplicitSize(), param.upsample_h(),
                 param.has_scale_h() ? param.scale_h() : param.scale(), param.pad_out_h());
  const int64_t out_width =
      OutputSize(width, HasExplicitSize(), param.upsample_w(),
                 param.has_scale_w() ? param.scale_w() : param.scale(), param.pad_out_w());
  CREMA_LAYER_REQUIRE(out_height >= height && out_width >= width,
                      "an output of " << out_height << " x " << out_width
                                      << " cannot hold the unpooled values of a " << height << " x "
                                      << width << " bottom");
  num_planes_ = bottom[0]->shape(0) * bottom[0]->shape(1);
  CREMA_LAYER_REQUIRE(out_height <= INT_MAX && out_width <= INT_MAX &&
                          out_height * out_width <= INT_MAX / std::max(num_planes_, 1),
                      "an output of " << num_planes_ << " planes of " << out_height << " x "
                                      << out_width << " exceeds " << INT_MAX << " elements");
  out_height_ = static_cast<int>(out_height);
  out_width_ = static_cast<int>(out_width);
  out_plane_ = out_height_ * out_width_;
  in_plane_ = height * width;
  top[0]->Reshape({bottom[0]->shape(0), bottom[0]->shape(1), out_height_, out_width_});
}

template <typename Dtype>
void UpsampleLayer<Dtype>::CheckMask(const Blob<Dtype>& mask) const {
  const Dtype* index = mask.cpu_data();
  for (int i = 0; i < mask.count(); ++i) {
    CREMA_LAYER_REQUIRE(IsIndexInPlane(index[i]),
                        "mask value " << index[i] << " (bottom[1] element " << i
                                      << ") is not an integer index inside the " << out_height_
                                      << " x " << out_width_
                                      << " output plane; does the pooling layer that made it "
                                         "match this layer's output size?");
  }
}

template <typename Dtype>
void UpsampleLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  CheckMask(*bottom[1]);
  const Dtype* data = bottom[0]->cpu_data();
  const Dtype* mask = bottom[1]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  cpu_set(top[0]->count(), Dtype(0), top_data);
  for (int p = 0; p < num_planes_; ++p) {
    Dtype* out = top_data + static_cast<size_t>(p) * out_plane_;
    const size_t first = static_cast<size_t>(p) * in_plane_;
    for (size_t i = first; i < first + in_plane_; ++i) out[static_cast<int>(mask[i])] = data[i];
  }
}

template <typename Dtype>
void UpsampleLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  const Dtype* mask = bottom[1]->cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  for (int p = 0; p < num_planes_; ++p) {
    const Dtype* out = top_diff + static_cast<size_t>(p) * out_plane_;
    const size_t first = static_cast<size_t>(p) * in_plane_;
    for (size_t i = first; i < first + in_plane_; ++i) {
      bottom_diff[i] = out[static_cast<int>(mask[i])];
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(UpsampleLayer);
#endif

INSTANTIATE_CLASS(UpsampleLayer);
// One type string, two forks' layers: SegNet's max unpooling (two bottoms,
// the mask second) and the YOLO forks' nearest neighbour (one bottom, only
// scale set).
template <typename Dtype>
std::shared_ptr<Layer<Dtype>> CreateUpsampleLayer(const LayerParameter& param) {
  if (NearestUpsampleLayer<Dtype>::IsYoloForm(param)) {
    return std::make_shared<NearestUpsampleLayer<Dtype>>(param);
  }
  return std::make_shared<UpsampleLayer<Dtype>>(param);
}
REGISTER_LAYER_CREATOR(Upsample, CreateUpsampleLayer);

}  // namespace crema
