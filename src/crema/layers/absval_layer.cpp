#include "crema/layers/absval_layer.hpp"

namespace crema {

template <typename Dtype>
void AbsValLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(top[0] != bottom[0],
                      "cannot compute in place (backward needs the sign of the input, which "
                      "|x| loses); give the top its own blob");
}

template <typename Dtype>
void AbsValLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  cpu_abs(bottom[0]->count(), bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
}

template <typename Dtype>
void AbsValLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_sign(count, bottom[0]->cpu_data(), bottom_diff);
  cpu_mul(count, bottom_diff, top[0]->cpu_diff(), bottom_diff);
}

#ifndef CREMA_CUDA
STUB_GPU(AbsValLayer);
#endif

INSTANTIATE_CLASS(AbsValLayer);
REGISTER_LAYER_CLASS(AbsVal);

}  // namespace crema
