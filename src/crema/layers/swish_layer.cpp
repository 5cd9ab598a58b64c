#include "crema/layers/swish_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void SwishLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  beta_ = this->layer_param_.swish_param().beta();
}

template <typename Dtype>
void SwishLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  NeuronLayer<Dtype>::Reshape(bottom, top);
  sigmoid_output_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void SwishLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* sigmoid_data = sigmoid_output_.mutable_cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) {
    const Dtype x = bottom_data[i];
    sigmoid_data[i] = Dtype(1) / (Dtype(1) + std::exp(-beta_ * x));
    top_data[i] = x * sigmoid_data[i];
  }
}

// With s = sigmoid(beta * x): dy/dx = s + beta * x * s * (1 - s)
// = beta * y + s * (1 - beta * y), which needs only y and the kept s, so in
// place works.
template <typename Dtype>
void SwishLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  const Dtype* sigmoid_data = sigmoid_output_.cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) {
    const Dtype beta_y = beta_ * top_data[i];
    bottom_diff[i] = top_diff[i] * (beta_y + sigmoid_data[i] * (Dtype(1) - beta_y));
  }
}

#ifndef CREMA_CUDA
STUB_GPU(SwishLayer);
#endif

INSTANTIATE_CLASS(SwishLayer);
REGISTER_LAYER_CLASS(Swish);

}  // namespace crema
