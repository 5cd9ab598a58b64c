#include "crema/layers/reduction_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void ReductionLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  operation_ = this->layer_param_.reduction_param().operation();
}

template <typename Dtype>
void ReductionLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int num_axes = bottom[0]->num_axes();
  const int axis = this->layer_param_.reduction_param().axis();
  CREMA_LAYER_REQUIRE(axis >= -num_axes && axis < num_axes,
                      "axis " << axis << " is out of range for a bottom of shape "
                              << bottom[0]->shape_string() << " (" << num_axes << " axes)");
  const int first_reduced_axis = bottom[0]->CanonicalAxisIndex(axis);
  const std::vector<int> top_shape(bottom[0]->shape().begin(),
                                   bottom[0]->shape().begin() + first_reduced_axis);
  top[0]->Reshape(top_shape);
  num_outputs_ = bottom[0]->count(0, first_reduced_axis);
  reduced_size_ = bottom[0]->count(first_reduced_axis);
}

template <typename Dtype>
Dtype ReductionLayer<Dtype>::Scale() const {
  const Dtype coeff = this->layer_param_.reduction_param().coeff();
  if (operation_ == ReductionParameter::MEAN) return coeff / reduced_size_;
  return coeff;
}

namespace {

template <typename Dtype>
Dtype ReduceRow(ReductionParameter::ReductionOp operation, int size, const Dtype* row) {
  Dtype total = 0;
  switch (operation) {
    case ReductionParameter::SUM:
    case ReductionParameter::MEAN:
      for (int j = 0; j < size; ++j) total += row[j];
      break;
    case ReductionParameter::ASUM:
      for (int j = 0; j < size; ++j) total += std::fabs(row[j]);
      break;
    case ReductionParameter::SUMSQ:
      for (int j = 0; j < size; ++j) total += row[j] * row[j];
      break;
  }
  return total;
}

// d(reduced term)/dx for one element; ASUM takes 0 as the slope at 0.
template <typename Dtype>
Dtype TermDerivative(ReductionParameter::ReductionOp operation, Dtype x) {
  switch (operation) {
    case ReductionParameter::ASUM:
      return static_cast<Dtype>((x > 0) - (x < 0));
    case ReductionParameter::SUMSQ:
      return 2 * x;
    case ReductionParameter::SUM:
    case ReductionParameter::MEAN:
      break;
  }
  return Dtype(1);
}

}  // namespace

template <typename Dtype>
void ReductionLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  // An empty blob may own no memory at all, so it is never touched.
  if (num_outputs_ == 0) return;
  Dtype* top_data = top[0]->mutable_cpu_data();
  if (reduced_size_ == 0) {
    cpu_set(num_outputs_, Dtype(0), top_data);
    return;
  }
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype scale = Scale();
  for (int i = 0; i < num_outputs_; ++i) {
    top_data[i] =
        scale * ReduceRow(operation_, reduced_size_, bottom_data + int64_t(i) * reduced_size_);
  }
}

template <typename Dtype>
void ReductionLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0] || bottom[0]->count() == 0) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const Dtype scale = Scale();
  for (int i = 0; i < num_outputs_; ++i) {
    const Dtype row_gradient = scale * top_diff[i];
    const int64_t row_start = int64_t(i) * reduced_size_;
    for (int j = 0; j < reduced_size_; ++j) {
      bottom_diff[row_start + j] =
          row_gradient * TermDerivative(operation_, bottom_data[row_start + j]);
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ReductionLayer);
#endif

INSTANTIATE_CLASS(ReductionLayer);
REGISTER_LAYER_CLASS(Reduction);

}  // namespace crema
