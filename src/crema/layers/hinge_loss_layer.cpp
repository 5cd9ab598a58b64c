#include "crema/layers/hinge_loss_layer.hpp"

#include <algorithm>

namespace crema {

template <typename Dtype>
void HingeLossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  CREMA_LAYER_REQUIRE(bottom[1]->count() == bottom[0]->shape(0),
                      "needs one label per item: the scores (bottom 0, shape "
                          << bottom[0]->shape_string() << ") hold " << bottom[0]->shape(0)
                          << " items, the labels (bottom 1, shape " << bottom[1]->shape_string()
                          << ") hold " << bottom[1]->count() << " values");
  margins_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void HingeLossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const int num = bottom[0]->shape(0);
  const int num_classes = bottom[0]->count(1);
  const Dtype* score = bottom[0]->cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  Dtype* margin = margins_.mutable_cpu_data();
  for (int i = 0; i < num; ++i) {
    const int label_value = this->ClassLabel(label[i], num_classes, i);
    for (int k = 0; k < num_classes; ++k) {
      const Dtype t = k == label_value ? 1 : -1;
      margin[i * num_classes + k] = std::max(Dtype(0), 1 - t * score[i * num_classes + k]);
    }
  }
  const int count = margins_.count();
  const Dtype sum = this->layer_param_.hinge_loss_param().norm() == HingeLossParameter::L2
                        ? cpu_dot(count, margin, margin)
                        : cpu_asum(count, margin);
  top[0]->mutable_cpu_data()[0] = sum / num;
}

// d/dx max(0, 1 - t x) = -t where the margin is positive (0 elsewhere), and
// d/dx max(0, 1 - t x)^2 = -2 t max(0, 1 - t x).
template <typename Dtype>
void HingeLossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  this->RequireNoGradient(propagate_down, 1, "the labels");
  if (!propagate_down[0]) return;
  const int num = bottom[0]->shape(0);
  const int num_classes = bottom[0]->count(1);
  const Dtype* label = bottom[1]->cpu_data();
  const Dtype* margin = margins_.cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const bool squared = this->layer_param_.hinge_loss_param().norm() == HingeLossParameter::L2;
  const Dtype scale = top[0]->cpu_diff()[0] / num;
  for (int i = 0; i < num; ++i) {
    const int label_value = static_cast<int>(label[i]);
    for (int k = 0; k < num_classes; ++k) {
      const int index = i * num_classes + k;
      const Dtype t = k == label_value ? 1 : -1;
      const Dtype slope = squared ? 2 * margin[index] : Dtype(margin[index] > 0 ? 1 : 0);
      bottom_diff[index] = -t * slope * scale;
    }
  }
}

INSTANTIATE_CLASS(HingeLossLayer);
REGISTER_LAYER_CLASS(HingeLoss);

}  // namespace crema
