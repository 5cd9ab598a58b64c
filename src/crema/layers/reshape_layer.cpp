#include "crema/layers/reshape_layer.hpp"

#include <climits>
#include <cstdint>
#include <sstream>
#include <string>

namespace crema {

template <typename Dtype>
void ReshapeLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(top[0] != bottom[0], "cannot compute in place: give the top its own name");
  const ReshapeParameter& param = this->layer_param_.reshape_param();
  CREMA_LAYER_REQUIRE(param.num_axes() >= -1,
                      "num_axes must be >= 0, or -1 for all the axes "
                      "from axis on, got "
                          << param.num_axes());
  copy_axes_.clear();
  inferred_axis_ = -1;
  const BlobShape& shape = param.shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    const int64_t dim = shape.dim(i);
    if (dim == 0) {
      copy_axes_.push_back(i);
    } else if (dim == -1) {
      CREMA_LAYER_REQUIRE(inferred_axis_ == -1, "the shape has a -1 at positions "
                                                    << inferred_axis_ << " and " << i
                                                    << ": at most one size can be inferred");
      inferred_axis_ = i;
    } else {
      CREMA_LAYER_REQUIRE(dim > 0 && dim <= INT_MAX,
                          "shape dim " << i << " is " << dim
                                       << ": a size must be positive, 0 (copy the bottom's) "
                                          "or -1 (infer it)");
    }
  }
}

template <typename Dtype>
std::vector<int> ReshapeLayer<Dtype>::TopShape(const Blob<Dtype>& bottom) const {
  const ReshapeParameter& param = this->layer_param_.reshape_param();
  const int bottom_axes = bottom.num_axes();
  // A negative axis counts from the end, -1 meaning "after the last axis".
  const int start_axis = param.axis() >= 0 ? param.axis() : bottom_axes + param.axis() + 1;
  CREMA_LAYER_REQUIRE(start_axis >= 0 && start_axis <= bottom_axes,
                      "axis " << param.axis() << " is out of range for a bottom of shape "
                              << bottom.shape_string());
  const int end_axis = param.num_axes() == -1 ? bottom_axes : start_axis + param.num_axes();
  CREMA_LAYER_REQUIRE(end_axis <= bottom_axes,
                      "axis " << param.axis() << " + num_axes " << param.num_axes()
                              << " goes past the last axis of a bottom of shape "
                              << bottom.shape_string());

  const std::vector<int>& bottom_shape = bottom.shape();
  std::vector<int> top_shape(bottom_shape.begin(), bottom_shape.begin() + start_axis);
  for (int i = 0; i < param.shape().dim_size(); ++i) {
    top_shape.push_back(static_cast<int>(param.shape().dim(i)));
  }
  top_shape.insert(top_shape.end(), bottom_shape.begin() + end_axis, bottom_shape.end());

  for (int copy_axis : copy_axes_) {
    const int bottom_axis = start_axis + copy_axis;
    CREMA_LAYER_REQUIRE(bottom_axis < bottom_axes, "the shape has a 0 at position "
                                                       << copy_axis << " but a bottom of shape "
                                                       << bottom.shape_string() << " has no axis "
                                                       << bottom_axis << " to copy");
    top_shape[bottom_axis] = bottom_shape[bottom_axis];
  }
  if (inferred_axis_ >= 0) {
    const int top_axis = start_axis + inferred_axis_;
    int64_t known_count = 1;
    for (size_t i = 0; i < top_shape.size(); ++i) {
      if (static_cast<int>(i) != top_axis) known_count *= top_shape[i];
    }
    CREMA_LAYER_REQUIRE(known_count > 0 && bottom.count() % known_count == 0,
                        "cannot infer the -1: the bottom's count "
                            << bottom.count() << " (shape " << bottom.shape_string()
                            << ") is not a multiple of the other sizes' product " << known_count);
    top_shape[top_axis] = static_cast<int>(bottom.count() / known_count);
  }
  return top_shape;
}

template <typename Dtype>
void ReshapeLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const std::vector<int> top_shape = TopShape(*bottom[0]);
  int64_t top_count = 1;
  for (int dim : top_shape) top_count *= dim;
  CREMA_LAYER_REQUIRE(top_count == bottom[0]->count(),
                      "the new shape " << ShapeString(top_shape) << " does not hold the "
                                       << bottom[0]->count() << " elements of the bottom "
                                       << bottom[0]->shape_string());
  top[0]->Reshape(top_shape);
  top[0]->ShareData(*bottom[0]);
  top[0]->ShareDiff(*bottom[0]);
}

INSTANTIATE_CLASS(ReshapeLayer);
REGISTER_LAYER_CLASS(Reshape);

}  // namespace crema
