#include "crema/layers/slice_layer.hpp"

#include <cstdint>

namespace crema {

template <typename Dtype>
void SliceLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const SliceParameter& param = this->layer_param_.slice_param();
  CREMA_LAYER_REQUIRE(!(param.has_axis() && param.has_slice_dim()),
                      "set either axis or the legacy slice_dim, not both");
  CREMA_LAYER_REQUIRE(
      param.slice_point_size() == 0 || param.slice_point_size() == static_cast<int>(top.size()) - 1,
      "has " << param.slice_point_size() << " slice points for " << top.size()
             << " tops: give one fewer point than tops, or none to split "
                "evenly");
}

template <typename Dtype>
int SliceLayer<Dtype>::SliceAxis(const Blob<Dtype>& bottom) const {
  const SliceParameter& param = this->layer_param_.slice_param();
  const int num_axes = bottom.num_axes();
  if (param.has_slice_dim()) {
    CREMA_LAYER_REQUIRE(param.slice_dim() < static_cast<uint32_t>(num_axes),
                        "slice_dim " << param.slice_dim()
                                     << " is out of range for a bottom of shape "
                                     << bottom.shape_string());
    return static_cast<int>(param.slice_dim());
  }
  const int axis = param.axis();
  CREMA_LAYER_REQUIRE(
      axis >= -num_axes && axis < num_axes,
      "axis " << axis << " is out of range for a bottom of shape " << bottom.shape_string());
  return axis < 0 ? axis + num_axes : axis;
}

template <typename Dtype>
std::vector<int> SliceLayer<Dtype>::SliceSizes(int axis_size, int num_tops) const {
  const SliceParameter& param = this->layer_param_.slice_param();
  if (param.slice_point_size() == 0) {
    CREMA_LAYER_REQUIRE(axis_size % num_tops == 0, "cannot split axis "
                                                       << slice_axis_ << " of size " << axis_size
                                                       << " evenly into " << num_tops << " tops");
    return std::vector<int>(num_tops, axis_size / num_tops);
  }
  std::vector<int> sizes;
  int64_t previous = 0;
  for (int i = 0; i < param.slice_point_size(); ++i) {
    const int64_t point = param.slice_point(i);
    CREMA_LAYER_REQUIRE(point > previous && point < axis_size,
                        "slice points must be strictly increasing and inside axis "
                            << slice_axis_ << " (strictly between 0 and its size " << axis_size
                            << "), got slice_point " << point << " after " << previous);
    sizes.push_back(static_cast<int>(point - previous));
    previous = point;
  }
  sizes.push_back(static_cast<int>(axis_size - previous));
  return sizes;
}

template <typename Dtype>
void SliceLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  slice_axis_ = SliceAxis(*bottom[0]);
  const std::vector<int> sizes =
      SliceSizes(bottom[0]->shape(slice_axis_), static_cast<int>(top.size()));
  std::vector<int> top_shape = bottom[0]->shape();
  for (size_t i = 0; i < top.size(); ++i) {
    top_shape[slice_axis_] = sizes[i];
    top[i]->Reshape(top_shape);
  }
  outer_count_ = bottom[0]->count(0, slice_axis_);
  inner_count_ = bottom[0]->count(slice_axis_ + 1);
  // One top: the top is the bottom, no copy needed either way.
  if (top.size() == 1) {
    top[0]->ShareData(*bottom[0]);
    top[0]->ShareDiff(*bottom[0]);
  }
}

template <typename Dtype>
void SliceLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  if (top.size() == 1) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const int64_t bottom_block = static_cast<int64_t>(bottom[0]->shape(slice_axis_)) * inner_count_;
  int64_t offset = 0;  // where this top's block starts inside each bottom block
  for (Blob<Dtype>* blob : top) {
    const int block = blob->shape(slice_axis_) * inner_count_;
    Dtype* top_data = blob->mutable_cpu_data();
    for (int n = 0; n < outer_count_; ++n) {
      cpu_copy(block, bottom_data + n * bottom_block + offset,
               top_data + n * static_cast<int64_t>(block));
    }
    offset += block;
  }
}

template <typename Dtype>
void SliceLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0] || top.size() == 1) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int64_t bottom_block = static_cast<int64_t>(bottom[0]->shape(slice_axis_)) * inner_count_;
  int64_t offset = 0;
  for (Blob<Dtype>* blob : top) {
    const int block = blob->shape(slice_axis_) * inner_count_;
    const Dtype* top_diff = blob->cpu_diff();
    for (int n = 0; n < outer_count_; ++n) {
      cpu_copy(block, top_diff + n * static_cast<int64_t>(block),
               bottom_diff + n * bottom_block + offset);
    }
    offset += block;
  }
}

#ifndef CREMA_CUDA
STUB_GPU(SliceLayer);
#endif

INSTANTIATE_CLASS(SliceLayer);
REGISTER_LAYER_CLASS(Slice);

}  // namespace crema
