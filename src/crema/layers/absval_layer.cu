#include "crema/layers/absval_layer.hpp"

namespace crema {

template <typename Dtype>
void AbsValLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  gpu_abs(bottom[0]->count(), bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

template <typename Dtype>
void AbsValLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  gpu_sign(count, bottom[0]->gpu_data(), bottom_diff);
  gpu_mul(count, bottom_diff, top[0]->gpu_diff(), bottom_diff);
}

INSTANTIATE_LAYER_GPU_FUNCS(AbsValLayer);

}  // namespace crema
