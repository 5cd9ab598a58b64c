#include "crema/layers/concat_layer.hpp"

#include <cstdint>

namespace crema {

template <typename Dtype>
void ConcatLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const ConcatParameter& param = this->layer_param_.concat_param();
  CREMA_LAYER_REQUIRE(!(param.has_axis() && param.has_concat_dim()),
                      "set either axis or the legacy concat_dim, not both");
}

template <typename Dtype>
int ConcatLayer<Dtype>::ConcatAxis(const Blob<Dtype>& bottom) const {
  const ConcatParameter& param = this->layer_param_.concat_param();
  const int num_axes = bottom.num_axes();
  if (param.has_concat_dim()) {
    CREMA_LAYER_REQUIRE(param.concat_dim() < static_cast<uint32_t>(num_axes),
                        "concat_dim " << param.concat_dim()
                                      << " is out of range for a bottom of shape "
                                      << bottom.shape_string());
    return static_cast<int>(param.concat_dim());
  }
  const int axis = param.axis();
  CREMA_LAYER_REQUIRE(
      axis >= -num_axes && axis < num_axes,
      "axis " << axis << " is out of range for a bottom of shape " << bottom.shape_string());
  return axis < 0 ? axis + num_axes : axis;
}

template <typename Dtype>
void ConcatLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  concat_axis_ = ConcatAxis(*bottom[0]);
  std::vector<int> top_shape = bottom[0]->shape();
  for (size_t i = 1; i < bottom.size(); ++i) {
    bool compatible = bottom[i]->num_axes() == bottom[0]->num_axes();
    for (int axis = 0; compatible && axis < bottom[0]->num_axes(); ++axis) {
      compatible = axis == concat_axis_ || bottom[i]->shape(axis) == bottom[0]->shape(axis);
    }
    CREMA_LAYER_REQUIRE(compatible, "bottom "
                                        << i << " has shape " << bottom[i]->shape_string()
                                        << " and bottom 0 has shape " << bottom[0]->shape_string()
                                        << ": all axes but the concatenation axis " << concat_axis_
                                        << " must match");
    top_shape[concat_axis_] += bottom[i]->shape(concat_axis_);
  }
  top[0]->Reshape(top_shape);
  outer_count_ = bottom[0]->count(0, concat_axis_);
  inner_count_ = bottom[0]->count(concat_axis_ + 1);
  // One bottom: the top is the bottom, no copy needed either way.
  if (bottom.size() == 1) {
    top[0]->ShareData(*bottom[0]);
    top[0]->ShareDiff(*bottom[0]);
  }
}

template <typename Dtype>
void ConcatLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  if (bottom.size() == 1) return;
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int64_t top_block = static_cast<int64_t>(top[0]->shape(concat_axis_)) * inner_count_;
  int64_t offset = 0;  // where this bottom's block starts inside each top block
  for (Blob<Dtype>* blob : bottom) {
    const int block = blob->shape(concat_axis_) * inner_count_;
    const Dtype* bottom_data = blob->cpu_data();
    for (int n = 0; n < outer_count_; ++n) {
      cpu_copy(block, bottom_data + n * static_cast<int64_t>(block),
               top_data + n * top_block + offset);
    }
    offset += block;
  }
}

template <typename Dtype>
void ConcatLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  if (bottom.size() == 1) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  const int64_t top_block = static_cast<int64_t>(top[0]->shape(concat_axis_)) * inner_count_;
  int64_t offset = 0;
  for (size_t i = 0; i < bottom.size(); ++i) {
    const int block = bottom[i]->shape(concat_axis_) * inner_count_;
    if (propagate_down[i]) {
      Dtype* bottom_diff = bottom[i]->mutable_cpu_diff();
      for (int n = 0; n < outer_count_; ++n) {
        cpu_copy(block, top_diff + n * top_block + offset,
                 bottom_diff + n * static_cast<int64_t>(block));
      }
    }
    offset += block;
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ConcatLayer);
#endif

INSTANTIATE_CLASS(ConcatLayer);
REGISTER_LAYER_CLASS(Concat);

}  // namespace crema
