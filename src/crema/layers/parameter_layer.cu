#include "crema/layers/parameter_layer.hpp"

namespace crema {

// Reshape already made the top show the blob's values.
template <typename Dtype>
void ParameterLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {}

template <typename Dtype>
void ParameterLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->param_propagate_down(0) || top[0]->count() == 0) return;
  gpu_axpy(top[0]->count(), Dtype(1), top[0]->gpu_diff(), this->blobs_[0]->mutable_gpu_diff());
}

INSTANTIATE_LAYER_GPU_FUNCS(ParameterLayer);

}  // namespace crema
