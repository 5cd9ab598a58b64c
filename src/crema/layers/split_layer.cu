#include "crema/layers/split_layer.hpp"

namespace crema {

template <typename Dtype>
void SplitLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  for (Blob<Dtype>* blob : top) blob->ShareData(*bottom[0]);
}

template <typename Dtype>
void SplitLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  if (top.size() == 1) {
    gpu_memcpy(count * sizeof(Dtype), top[0]->gpu_diff(), bottom_diff);
    return;
  }
  gpu_add(count, top[0]->gpu_diff(), top[1]->gpu_diff(), bottom_diff);
  for (size_t i = 2; i < top.size(); ++i) {
    gpu_axpy(count, Dtype(1), top[i]->gpu_diff(), bottom_diff);
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(SplitLayer);

}  // namespace crema
