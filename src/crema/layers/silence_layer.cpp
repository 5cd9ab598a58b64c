#include "crema/layers/silence_layer.hpp"

namespace crema {

template <typename Dtype>
void SilenceLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate_down[i] || bottom[i]->count() == 0) continue;
    cpu_set(bottom[i]->count(), Dtype(0), bottom[i]->mutable_cpu_diff());
  }
}

#ifndef CREMA_CUDA
STUB_GPU(SilenceLayer);
#endif

INSTANTIATE_CLASS(SilenceLayer);
REGISTER_LAYER_CLASS(Silence);

}  // namespace crema
