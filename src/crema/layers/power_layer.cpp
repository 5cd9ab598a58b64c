#include "crema/layers/power_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void PowerLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const PowerParameter& power_param = this->layer_param_.power_param();
  power_ = power_param.power();
  scale_ = power_param.scale();
  shift_ = power_param.shift();
  derivative_scale_ = power_ * scale_;
}

template <typename Dtype>
void PowerLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  NeuronLayer<Dtype>::Reshape(bottom, top);
  if (top[0] == bottom[0] && DerivativeNeedsInput()) bottom_copy_.ReshapeLike(*bottom[0]);
}

// With power 0 or scale 0 the output is a constant (0^0 counts as 1).
template <typename Dtype>
void PowerLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  Dtype* top_data = top[0]->mutable_cpu_data();
  if (derivative_scale_ == 0) {
    cpu_set(count, power_ == 0 ? Dtype(1) : Dtype(std::pow(shift_, power_)), top_data);
    return;
  }
  const Dtype* bottom_data = bottom[0]->cpu_data();
  if (top[0] == bottom[0] && DerivativeNeedsInput()) {
    cpu_copy(count, bottom_data, bottom_copy_.mutable_cpu_data());
  }
  for (int i = 0; i < count; ++i) {
    top_data[i] = std::pow(shift_ + scale_ * bottom_data[i], power_);
  }
}

// dy/dx = power * scale * (shift + scale * x)^(power - 1), computed from x
// rather than as y / (shift + scale * x), which divides by zero at a root.
template <typename Dtype>
void PowerLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  if (!DerivativeNeedsInput()) {
    cpu_scale(count, derivative_scale_, top_diff, bottom_diff);
    return;
  }
  const Dtype* bottom_data = top[0] == bottom[0] ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  for (int i = 0; i < count; ++i) {
    const Dtype base = shift_ + scale_ * bottom_data[i];
    bottom_diff[i] = top_diff[i] * derivative_scale_ * std::pow(base, power_ - 1);
  }
}

#ifndef CREMA_CUDA
STUB_GPU(PowerLayer);
#endif

INSTANTIATE_CLASS(PowerLayer);
REGISTER_LAYER_CLASS(Power);

}  // namespace crema
