#include "crema/layers/mish_layer.hpp"

#include <cmath>

namespace crema {

namespace {

template <typename Dtype>
Dtype Softplus(Dtype x) {
  if (x > Dtype(20)) return x;
  if (x < Dtype(-20)) return std::exp(x);
  return std::log1p(std::exp(x));
}

}  // namespace

template <typename Dtype>
void MishLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  if (top[0] == bottom[0]) input_copy_.CopyFrom(*bottom[0], false, true);
  const Dtype* x = bottom[0]->cpu_data();
  Dtype* y = top[0]->mutable_cpu_data();
  for (int i = 0; i < bottom[0]->count(); ++i) y[i] = x[i] * std::tanh(Softplus(x[i]));
}

template <typename Dtype>
void MishLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* x = top[0] == bottom[0] ? input_copy_.cpu_data() : bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  for (int i = 0; i < bottom[0]->count(); ++i) {
    const Dtype t = std::tanh(Softplus(x[i]));
    const Dtype sigmoid = Dtype(1) / (Dtype(1) + std::exp(-x[i]));
    bottom_diff[i] = top_diff[i] * (t + x[i] * (Dtype(1) - t * t) * sigmoid);
  }
}

#ifndef CREMA_CUDA
STUB_GPU(MishLayer);
#endif

INSTANTIATE_CLASS(MishLayer);
REGISTER_LAYER_CLASS(Mish);

}  // namespace crema
