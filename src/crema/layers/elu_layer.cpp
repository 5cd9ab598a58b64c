#include "crema/layers/elu_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void ELULayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  const Dtype alpha = this->layer_param_.elu_param().alpha();
  for (int i = 0; i < count; ++i) {
    const Dtype x = bottom_data[i];
    top_data[i] = x > 0 ? x : alpha * std::expm1(x);
  }
}

// For x <= 0, dy/dx = alpha * e^x = y + alpha, so the gradient needs only the
// output. In place, bottom data holds y, whose sign is x's (for alpha >= 0).
template <typename Dtype>
void ELULayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  const Dtype alpha = this->layer_param_.elu_param().alpha();
  for (int i = 0; i < count; ++i) {
    bottom_diff[i] = top_diff[i] * (bottom_data[i] > 0 ? Dtype(1) : top_data[i] + alpha);
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ELULayer);
#endif

INSTANTIATE_CLASS(ELULayer);
REGISTER_LAYER_CLASS(ELU);

}  // namespace crema
