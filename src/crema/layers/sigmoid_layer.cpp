#include "crema/layers/sigmoid_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void SigmoidLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  // e^-x overflows to inf for very negative x, which still gives the right 0.
  for (int i = 0; i < count; ++i) top_data[i] = Dtype(1) / (Dtype(1) + std::exp(-bottom_data[i]));
}

// dy/dx = y * (1 - y) needs only the output, so in place works.
template <typename Dtype>
void SigmoidLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) {
    bottom_diff[i] = top_diff[i] * top_data[i] * (Dtype(1) - top_data[i]);
  }
}

#ifndef CREMA_CUDA
STUB_GPU(SigmoidLayer);
#endif

INSTANTIATE_CLASS(SigmoidLayer);
REGISTER_LAYER_CLASS(Sigmoid);

}  // namespace crema
