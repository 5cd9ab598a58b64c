#include "crema/layers/euclidean_loss_layer.hpp"

namespace crema {

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  CREMA_LAYER_REQUIRE(bottom[0]->count(1) == bottom[1]->count(1),
                      "bottoms must have the same size per item: bottom 0 has shape "
                          << bottom[0]->shape_string() << ", bottom 1 has shape "
                          << bottom[1]->shape_string());
  difference_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  cpu_sub(count, bottom[0]->cpu_data(), bottom[1]->cpu_data(), difference_.mutable_cpu_data());
  const Dtype sum_of_squares = cpu_dot(count, difference_.cpu_data(), difference_.cpu_data());
  top[0]->mutable_cpu_data()[0] = sum_of_squares / bottom[0]->shape(0) / Dtype(2);
}

// d loss / d a = (a - b) / N and d loss / d b = -(a - b) / N.
template <typename Dtype>
void EuclideanLossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                             const std::vector<bool>& propagate_down,
                                             const std::vector<Blob<Dtype>*>& bottom) {
  for (int i = 0; i < 2; ++i) {
    if (!propagate_down[i]) continue;
    const Dtype sign = i == 0 ? 1 : -1;
    const Dtype scale = sign * top[0]->cpu_diff()[0] / bottom[i]->shape(0);
    cpu_scale(bottom[i]->count(), scale, difference_.cpu_data(), bottom[i]->mutable_cpu_diff());
  }
}

#ifndef CREMA_CUDA
STUB_GPU(EuclideanLossLayer);
#endif

INSTANTIATE_CLASS(EuclideanLossLayer);
REGISTER_LAYER_CLASS(EuclideanLoss);

}  // namespace crema
