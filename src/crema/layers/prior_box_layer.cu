#include "crema/layers/prior_box_layer.hpp"

namespace crema {

// The boxes are a function of the shapes only, computed once per forward on
// the CPU; the top is then read from the GPU by the next layer.
template <typename Dtype>
void PriorBoxLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  Forward_cpu(bottom, top);
}

template <typename Dtype>
void PriorBoxLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i]) gpu_set(bottom[i]->count(), Dtype(0), bottom[i]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(PriorBoxLayer);

}  // namespace crema
