#include "crema/layers/relu_layer.hpp"

#include <algorithm>

namespace crema {

template <typename Dtype>
void ReLULayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  const Dtype negative_slope = this->layer_param_.relu_param().negative_slope();
  for (int i = 0; i < count; ++i) {
    top_data[i] =
        std::max(bottom_data[i], Dtype(0)) + negative_slope * std::min(bottom_data[i], Dtype(0));
  }
}

// In place, bottom data already holds the output; its sign equals the input's
// (for a non-negative slope), so the mask below is still right.
template <typename Dtype>
void ReLULayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  const Dtype negative_slope = this->layer_param_.relu_param().negative_slope();
  // The factor is chosen first and multiplied after: GCC turns a select of
  // two values into a vector blend, but keeps a branch (mispredicted on half
  // the values) when the product sits inside the choice.
  for (int i = 0; i < count; ++i) {
    const Dtype factor = bottom_data[i] > 0 ? Dtype(1) : negative_slope;
    bottom_diff[i] = top_diff[i] * factor;
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ReLULayer);
#endif

INSTANTIATE_CLASS(ReLULayer);
REGISTER_LAYER_CLASS(ReLU);

}  // namespace crema
