#include "crema/layers/flatten_layer.hpp"

namespace crema {

template <typename Dtype>
int FlattenLayer<Dtype>::CanonicalAxis(const Blob<Dtype>& bottom, int axis,
                                       const char* name) const {
  const int num_axes = bottom.num_axes();
  CREMA_LAYER_REQUIRE(
      axis >= -num_axes && axis < num_axes,
      name << " " << axis << " is out of range for a bottom of shape " << bottom.shape_string());
  return axis < 0 ? axis + num_axes : axis;
}

template <typename Dtype>
void FlattenLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(top[0] != bottom[0], "cannot compute in place: give the top its own name");
  const FlattenParameter& param = this->layer_param_.flatten_param();
  const int start_axis = CanonicalAxis(*bottom[0], param.axis(), "axis");
  const int end_axis = CanonicalAxis(*bottom[0], param.end_axis(), "end_axis");
  CREMA_LAYER_REQUIRE(start_axis <= end_axis,
                      "end_axis " << param.end_axis() << " comes before axis " << param.axis()
                                  << " in a bottom of shape " << bottom[0]->shape_string());
  const std::vector<int>& bottom_shape = bottom[0]->shape();
  std::vector<int> top_shape(bottom_shape.begin(), bottom_shape.begin() + start_axis);
  top_shape.push_back(bottom[0]->count(start_axis, end_axis + 1));
  top_shape.insert(top_shape.end(), bottom_shape.begin() + end_axis + 1, bottom_shape.end());
  top[0]->Reshape(top_shape);
  top[0]->ShareData(*bottom[0]);
  top[0]->ShareDiff(*bottom[0]);
}

INSTANTIATE_CLASS(FlattenLayer);
REGISTER_LAYER_CLASS(Flatten);

}  // namespace crema
