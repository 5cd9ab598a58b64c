#include "crema/layers/log_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void LogLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  const LogParameter& log_param = this->layer_param_.log_param();
  const Dtype base = log_param.base();
  CREMA_LAYER_REQUIRE(base == Dtype(-1) || (base > 0 && base != Dtype(1)),
                      "base must be positive and not 1, or -1 for e; got " << base);
  base_scale_ = base == Dtype(-1) ? Dtype(1) : Dtype(1) / std::log(base);
  input_scale_ = log_param.scale();
  input_shift_ = log_param.shift();
}

template <typename Dtype>
void LogLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                              const std::vector<Blob<Dtype>*>& top) {
  NeuronLayer<Dtype>::Reshape(bottom, top);
  if (top[0] == bottom[0]) bottom_copy_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void LogLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  if (top[0] == bottom[0]) cpu_copy(count, bottom_data, bottom_copy_.mutable_cpu_data());
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int i = 0; i < count; ++i) {
    top_data[i] = base_scale_ * std::log(input_shift_ + input_scale_ * bottom_data[i]);
  }
}

template <typename Dtype>
void LogLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = top[0] == bottom[0] ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  const Dtype numerator = base_scale_ * input_scale_;
  for (int i = 0; i < count; ++i) {
    bottom_diff[i] = top_diff[i] * numerator / (input_shift_ + input_scale_ * bottom_data[i]);
  }
}

#ifndef CREMA_CUDA
STUB_GPU(LogLayer);
#endif

INSTANTIATE_CLASS(LogLayer);
REGISTER_LAYER_CLASS(Log);

}  // namespace crema
