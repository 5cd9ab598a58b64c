#include "crema/layers/threshold_layer.hpp"

namespace crema {

template <typename Dtype>
void ThresholdLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  threshold_ = this->layer_param_.threshold_param().threshold();
}

template <typename Dtype>
void ThresholdLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) top_data[i] = bottom_data[i] > threshold_ ? Dtype(1) : Dtype(0);
}

// The step's derivative is zero wherever it exists, so nothing flows back.
template <typename Dtype>
void ThresholdLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  cpu_set(bottom[0]->count(), Dtype(0), bottom[0]->mutable_cpu_diff());
}

#ifndef CREMA_CUDA
STUB_GPU(ThresholdLayer);
#endif

INSTANTIATE_CLASS(ThresholdLayer);
REGISTER_LAYER_CLASS(Threshold);

}  // namespace crema
