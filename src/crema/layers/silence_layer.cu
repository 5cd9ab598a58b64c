#include "crema/layers/silence_layer.hpp"

namespace crema {

template <typename Dtype>
void SilenceLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {}

template <typename Dtype>
void SilenceLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate_down[i] || bottom[i]->count() == 0) continue;
    gpu_set(bottom[i]->count(), Dtype(0), bottom[i]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(SilenceLayer);

}  // namespace crema
