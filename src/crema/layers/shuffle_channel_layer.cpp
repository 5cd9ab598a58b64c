#include "crema/layers/shuffle_channel_layer.hpp"

#include <algorithm>
#include <cstdint>

namespace crema {

template <typename Dtype>
void ShuffleChannelLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  const uint32_t group = this->layer_param_.shuffle_channel_param().group();
  CREMA_LAYER_REQUIRE(group > 0, "shuffle_channel_param.group must be positive, got 0");
  CREMA_LAYER_REQUIRE(group <= static_cast<uint32_t>(INT32_MAX),
                      "shuffle_channel_param.group " << group << " is too large");
  group_ = static_cast<int>(group);
}

template <typename Dtype>
void ShuffleChannelLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() >= 2, "the bottom needs a channel axis (axis 1), its "
                                                      << "shape is " << bottom[0]->shape_string());
  num_ = bottom[0]->shape(0);
  channels_ = bottom[0]->shape(1);
  spatial_dim_ = bottom[0]->count(2);
  CREMA_LAYER_REQUIRE(channels_ % group_ == 0, "group " << group_ << " must divide the "
                                                        << channels_ << " channels of the bottom "
                                                        << bottom[0]->shape_string());
  top[0]->ReshapeLike(*bottom[0]);
  if (top[0] == bottom[0]) in_place_buffer_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void ShuffleChannelLayer<Dtype>::Transpose_cpu(const Dtype* input, int rows, Dtype* output) const {
  const int cols = channels_ / rows;
  const size_t image_size = static_cast<size_t>(channels_) * spatial_dim_;
  for (int n = 0; n < num_; ++n) {
    const Dtype* image_in = input + n * image_size;
    Dtype* image_out = output + n * image_size;
    for (int row = 0; row < rows; ++row) {
      for (int col = 0; col < cols; ++col) {
        const Dtype* channel_in = image_in + static_cast<size_t>(row * cols + col) * spatial_dim_;
        std::copy(channel_in, channel_in + spatial_dim_,
                  image_out + static_cast<size_t>(col * rows + row) * spatial_dim_);
      }
    }
  }
}

template <typename Dtype>
void ShuffleChannelLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>& top) {
  const bool in_place = top[0] == bottom[0];
  Dtype* output = in_place ? in_place_buffer_.mutable_cpu_data() : top[0]->mutable_cpu_data();
  Transpose_cpu(bottom[0]->cpu_data(), group_, output);
  if (in_place) cpu_copy(top[0]->count(), output, top[0]->mutable_cpu_data());
}

template <typename Dtype>
void ShuffleChannelLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                              const std::vector<bool>& propagate_down,
                                              const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const bool in_place = top[0] == bottom[0];
  Dtype* output = in_place ? in_place_buffer_.mutable_cpu_diff() : bottom[0]->mutable_cpu_diff();
  Transpose_cpu(top[0]->cpu_diff(), channels_ / group_, output);
  if (in_place) cpu_copy(bottom[0]->count(), output, bottom[0]->mutable_cpu_diff());
}

#ifndef CREMA_CUDA
STUB_GPU(ShuffleChannelLayer);
#endif

INSTANTIATE_CLASS(ShuffleChannelLayer);
REGISTER_LAYER_CLASS(ShuffleChannel);

}  // namespace crema
