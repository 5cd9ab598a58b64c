#include "crema/layers/multinomial_logistic_loss_layer.hpp"

#include <algorithm>
#include <cmath>

namespace crema {

template <typename Dtype>
void MultinomialLogisticLossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                                  const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  CREMA_LAYER_REQUIRE(bottom[1]->count() == bottom[0]->shape(0),
                      "needs one label per item: the probabilities (bottom 0, shape "
                          << bottom[0]->shape_string() << ") hold " << bottom[0]->shape(0)
                          << " items, the labels (bottom 1, shape " << bottom[1]->shape_string()
                          << ") hold " << bottom[1]->count() << " values");
}

template <typename Dtype>
void MultinomialLogisticLossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                      const std::vector<Blob<Dtype>*>& top) {
  const int num = bottom[0]->shape(0);
  const int num_classes = bottom[0]->count(1);
  const Dtype* prob = bottom[0]->cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  Dtype loss = 0;
  for (int i = 0; i < num; ++i) {
    const int label_value = this->ClassLabel(label[i], num_classes, i);
    loss -= std::log(std::max(prob[i * num_classes + label_value], Dtype(kLogThreshold)));
  }
  top[0]->mutable_cpu_data()[0] = loss / num;
}

// Only the labelled probability of each item has a gradient: -1 / (N p).
template <typename Dtype>
void MultinomialLogisticLossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                       const std::vector<bool>& propagate_down,
                                                       const std::vector<Blob<Dtype>*>& bottom) {
  this->RequireNoGradient(propagate_down, 1, "the labels");
  if (!propagate_down[0]) return;
  const int num = bottom[0]->shape(0);
  const int num_classes = bottom[0]->count(1);
  const Dtype* prob = bottom[0]->cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_set(bottom[0]->count(), Dtype(0), bottom_diff);
  const Dtype scale = top[0]->cpu_diff()[0] / num;
  for (int i = 0; i < num; ++i) {
    const int index = i * num_classes + static_cast<int>(label[i]);
    bottom_diff[index] = -scale / std::max(prob[index], Dtype(kLogThreshold));
  }
}

INSTANTIATE_CLASS(MultinomialLogisticLossLayer);
REGISTER_LAYER_CLASS(MultinomialLogisticLoss);

}  // namespace crema
