#include "crema/layers/tile_layer.hpp"

#include <climits>
#include <cstdint>

namespace crema {

template <typename Dtype>
void TileLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                               const std::vector<Blob<Dtype>*>& top) {
  const TileParameter& param = this->layer_param_.tile_param();
  CREMA_LAYER_REQUIRE(param.has_tiles(), "needs tiles, the number of copies");
  CREMA_LAYER_REQUIRE(param.tiles() > 0, "tiles must be positive, got " << param.tiles());
  const int num_axes = bottom[0]->num_axes();
  CREMA_LAYER_REQUIRE(param.axis() >= -num_axes && param.axis() < num_axes,
                      "axis " << param.axis() << " is out of range for a bottom of shape "
                              << bottom[0]->shape_string());
  const int axis = param.axis() < 0 ? param.axis() + num_axes : param.axis();
  tiles_ = param.tiles();
  std::vector<int> top_shape = bottom[0]->shape();
  const int64_t tiled_size = static_cast<int64_t>(top_shape[axis]) * tiles_;
  CREMA_LAYER_REQUIRE(tiled_size <= INT_MAX, "tiling axis " << axis << " of size "
                                                            << top_shape[axis] << " " << tiles_
                                                            << " times is too large");
  top_shape[axis] = static_cast<int>(tiled_size);
  top[0]->Reshape(top_shape);
  outer_count_ = bottom[0]->count(0, axis);
  inner_count_ = bottom[0]->count(axis);
}

template <typename Dtype>
void TileLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int n = 0; n < outer_count_; ++n) {
    for (int t = 0; t < tiles_; ++t) {
      cpu_copy(inner_count_, bottom_data, top_data);
      top_data += inner_count_;
    }
    bottom_data += inner_count_;
  }
}

template <typename Dtype>
void TileLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  for (int n = 0; n < outer_count_; ++n) {
    cpu_copy(inner_count_, top_diff, bottom_diff);
    top_diff += inner_count_;
    for (int t = 1; t < tiles_; ++t) {
      cpu_axpy(inner_count_, Dtype(1), top_diff, bottom_diff);
      top_diff += inner_count_;
    }
    bottom_diff += inner_count_;
  }
}

#ifndef CREMA_CUDA
STUB_GPU(TileLayer);
#endif

INSTANTIATE_CLASS(TileLayer);
REGISTER_LAYER_CLASS(Tile);

}  // namespace crema
