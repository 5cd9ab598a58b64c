#include "crema/layers/euclidean_loss_layer.hpp"

namespace crema {

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  gpu_sub(count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), difference_.mutable_gpu_data());
  Dtype sum_of_squares = 0;
  gpu_dot(count, difference_.gpu_data(), difference_.gpu_data(), &sum_of_squares);
  top[0]->mutable_cpu_data()[0] = sum_of_squares / bottom[0]->shape(0) / Dtype(2);
}

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                             const std::vector<bool>& propagate_down,
                                             const std::vector<Blob<Dtype>*>& bottom) {
  for (int i = 0; i < 2; ++i) {
    if (!propagate_down[i]) continue;
    const Dtype sign = i == 0 ? 1 : -1;
    const Dtype scale = sign * top[0]->cpu_diff()[0] / bottom[i]->shape(0);
    gpu_scale(bottom[i]->count(), scale, difference_.gpu_data(), bottom[i]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(EuclideanLossLayer);

}  // namespace crema
