#include "crema/layers/crop_layer.hpp"

#include <vector>

namespace crema {

template <typename Dtype>
void CropLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                               const std::vector<Blob<Dtype>*>& top) {
  const CropParameter& param = this->layer_param_.crop_param();
  const Blob<Dtype>& input = *bottom[0];
  const Blob<Dtype>& reference = *bottom[1];
  const int num_axes = input.num_axes();
  CREMA_LAYER_REQUIRE(reference.num_axes() == num_axes,
                      "bottom[0] of shape " << input.shape_string() << " and bottom[1] of shape "
                                            << reference.shape_string()
                                            << " must have the same number of axes");
  CREMA_LAYER_REQUIRE(param.axis() >= -num_axes && param.axis() < num_axes,
                      "axis " << param.axis() << " is out of range for bottom[0] of shape "
                              << input.shape_string());
  const int start_axis = input.CanonicalAxisIndex(param.axis());
  const int cropped_axes = num_axes - start_axis;
  CREMA_LAYER_REQUIRE(param.offset_size() <= 1 || param.offset_size() == cropped_axes,
                      "give no offset, one for every cropped axis, or one per cropped axis ("
                          << cropped_axes << " from axis " << start_axis << "), got "
                          << param.offset_size());
  top_shape_ = input.shape();
  offsets_.assign(num_axes, 0);
  for (int axis = start_axis; axis < num_axes; ++axis) {
    const int offset = param.offset_size() == 0 ? 0
                       : param.offset_size() == 1
                           ? static_cast<int>(param.offset(0))
                           : static_cast<int>(param.offset(axis - start_axis));
    const int size = reference.shape(axis);
    CREMA_LAYER_REQUIRE(offset >= 0 && static_cast<int64_t>(offset) + size <= input.shape(axis),
                        "a crop of size " << size << " at offset " << offset << " on axis " << axis
                                          << " runs past bottom[0] of shape "
                                          << input.shape_string());
    top_shape_[axis] = size;
    offsets_[axis] = offset;
  }
  bottom_strides_.assign(num_axes, 1);
  for (int axis = num_axes - 2; axis >= 0; --axis) {
    bottom_strides_[axis] = bottom_strides_[axis + 1] * input.shape(axis + 1);
  }
  top[0]->Reshape(top_shape_);
}

template <typename Dtype>
int CropLayer<Dtype>::BottomIndexOfTopRow(int row) const {
  const int last_axis = static_cast<int>(top_shape_.size()) - 1;
  int index = offsets_[last_axis];
  for (int axis = last_axis - 1; axis >= 0; --axis) {
    const int coordinate = row % top_shape_[axis];
    row /= top_shape_[axis];
    index += (coordinate + offsets_[axis]) * bottom_strides_[axis];
  }
  return index;
}

template <typename Dtype>
void CropLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  if (top[0]->count() == 0) return;
  const int row_length = top_shape_.back();
  const int rows = top[0]->count() / row_length;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int row = 0; row < rows; ++row) {
    cpu_copy(row_length, bottom_data + BottomIndexOfTopRow(row), top_data + row * row_length);
  }
}

// bottom[1] gives only a shape: it has no gradient.
template <typename Dtype>
void CropLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_set(bottom[0]->count(), Dtype(0), bottom_diff);
  if (top[0]->count() == 0) return;
  const int row_length = top_shape_.back();
  const int rows = top[0]->count() / row_length;
  const Dtype* top_diff = top[0]->cpu_diff();
  for (int row = 0; row < rows; ++row) {
    cpu_copy(row_length, top_diff + row * row_length, bottom_diff + BottomIndexOfTopRow(row));
  }
}

#ifndef CREMA_CUDA
STUB_GPU(CropLayer);
#endif

INSTANTIATE_CLASS(CropLayer);
REGISTER_LAYER_CLASS(Crop);

}  // namespace crema
