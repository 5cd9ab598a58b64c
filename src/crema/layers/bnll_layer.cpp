#include "crema/layers/bnll_layer.hpp"

#include <cmath>

namespace crema {

// log(1 + e^x) = x + log(1 + e^-x): the second form for x > 0 keeps e^x from
// overflowing.
template <typename Dtype>
void BNLLLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) {
    const Dtype x = bottom_data[i];
    top_data[i] = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
}

// dy/dx = sigmoid(x), and e^y = 1 + e^x gives sigmoid(x) = 1 - e^-y: the
// gradient needs only the output, so in place works too.
template <typename Dtype>
void BNLLLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) bottom_diff[i] = -top_diff[i] * std::expm1(-top_data[i]);
}

#ifndef CREMA_CUDA
STUB_GPU(BNLLLayer);
#endif

INSTANTIATE_CLASS(BNLLLayer);
REGISTER_LAYER_CLASS(BNLL);

}  // namespace crema
