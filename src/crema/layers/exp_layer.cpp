#include "crema/layers/exp_layer.hpp"

#include <cmath>

namespace crema {

// base^(shift + scale * x) = base^shift * e^(ln(base) * scale * x).
template <typename Dtype>
void ExpLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  const ExpParameter& exp_param = this->layer_param_.exp_param();
  const Dtype base = exp_param.base();
  CREMA_LAYER_REQUIRE(base == Dtype(-1) || base > 0,
                      "base must be positive, or -1 for e; got " << base);
  const Dtype log_base = base == Dtype(-1) ? Dtype(1) : std::log(base);
  inner_scale_ = log_base * exp_param.scale();
  outer_scale_ = std::exp(log_base * exp_param.shift());
}

template <typename Dtype>
void ExpLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) {
    top_data[i] = outer_scale_ * std::exp(inner_scale_ * bottom_data[i]);
  }
}

// dy/dx = inner_scale * y needs only the output, so in place works.
template <typename Dtype>
void ExpLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) bottom_diff[i] = top_diff[i] * inner_scale_ * top_data[i];
}

#ifndef CREMA_CUDA
STUB_GPU(ExpLayer);
#endif

INSTANTIATE_CLASS(ExpLayer);
REGISTER_LAYER_CLASS(Exp);

}  // namespace crema
