#include "crema/layers/contrastive_loss_layer.hpp"

#include <algorithm>
#include <cmath>

namespace crema {

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  CREMA_LAYER_REQUIRE(bottom[0]->shape() == bottom[1]->shape(),
                      "the two feature bottoms must have the same shape, got "
                          << bottom[0]->shape_string() << " and " << bottom[1]->shape_string());
  CREMA_LAYER_REQUIRE(bottom[2]->count() == bottom[0]->shape(0),
                      "needs one pair label per item: the features (bottom 0, shape "
                          << bottom[0]->shape_string() << ") hold " << bottom[0]->shape(0)
                          << " items, the pair labels (bottom 2, shape "
                          << bottom[2]->shape_string() << ") hold " << bottom[2]->count()
                          << " values");
  difference_.ReshapeLike(*bottom[0]);
  squared_distance_.Reshape(std::vector<int>{bottom[0]->shape(0)});
}

template <typename Dtype>
Dtype ContrastiveLossLayer<Dtype>::LossFromDistances(const Dtype* squared_distance,
                                                     const Dtype* pair_label) const {
  const ContrastiveLossParameter& param = this->layer_param_.contrastive_loss_param();
  const Dtype margin = param.margin();
  const int num = squared_distance_.count();
  Dtype loss = 0;
  for (int i = 0; i < num; ++i) {
    // Caffe reads any non-zero integer part as "similar"; 0.5 or -1 would
    // pass as a pair of the other kind.
    CREMA_LAYER_REQUIRE(pair_label[i] == 0 || pair_label[i] == 1,
                        "pair label " << pair_label[i] << " of item " << i
                                      << " is neither 1 (similar) nor 0 (dissimilar)");
    if (static_cast<int>(pair_label[i]) != 0) {
      loss += squared_distance[i];
    } else if (param.legacy_version()) {
      loss += std::max(margin - squared_distance[i], Dtype(0));
    } else {
      const Dtype shortfall = std::max(margin - std::sqrt(squared_distance[i]), Dtype(0));
      loss += shortfall * shortfall;
    }
  }
  return loss / num / Dtype(2);
}

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  const int num = bottom[0]->shape(0);
  const int dim = bottom[0]->count(1);
  Dtype* difference = difference_.mutable_cpu_data();
  cpu_sub(bottom[0]->count(), bottom[0]->cpu_data(), bottom[1]->cpu_data(), difference);
  Dtype* squared_distance = squared_distance_.mutable_cpu_data();
  for (int i = 0; i < num; ++i) {
    squared_distance[i] = cpu_dot(dim, difference + i * dim, difference + i * dim);
  }
  top[0]->mutable_cpu_data()[0] = LossFromDistances(squared_distance, bottom[2]->cpu_data());
}

// With s = +1 for a and -1 for b, d loss / d a_n (or b_n) is s (a_n - b_n) / N
// for a similar pair; for a dissimilar pair inside the margin it is
// -s (margin - dist) (a_n - b_n) / (N dist) (legacy: -s (a_n - b_n) / N), with
// 1e-4 added to dist so identical vectors do not divide by zero; 0 otherwise.
template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  this->RequireNoGradient(propagate_down, 2, "the pair labels");
  const ContrastiveLossParameter& param = this->layer_param_.contrastive_loss_param();
  const Dtype margin = param.margin();
  const int num = bottom[0]->shape(0);
  const int dim = bottom[0]->count(1);
  const Dtype* pair_label = bottom[2]->cpu_data();
  const Dtype* difference = difference_.cpu_data();
  const Dtype* squared_distance = squared_distance_.cpu_data();
  for (int b = 0; b < 2; ++b) {
    if (!propagate_down[b]) continue;
    const Dtype scale = (b == 0 ? 1 : -1) * top[0]->cpu_diff()[0] / num;
    Dtype* bottom_diff = bottom[b]->mutable_cpu_diff();
    for (int i = 0; i < num; ++i) {
      Dtype pair_scale = 0;
      if (static_cast<int>(pair_label[i]) != 0) {
        pair_scale = scale;
      } else if (param.legacy_version()) {
        if (margin - squared_distance[i] > 0) pair_scale = -scale;
      } else {
        const Dtype distance = std::sqrt(squared_distance[i]);
        const Dtype shortfall = margin - distance;
        if (shortfall > 0) pair_scale = -scale * shortfall / (distance + Dtype(1e-4));
      }
      cpu_scale(dim, pair_scale, difference + i * dim, bottom_diff + i * dim);
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ContrastiveLossLayer);
#endif

INSTANTIATE_CLASS(ContrastiveLossLayer);
REGISTER_LAYER_CLASS(ContrastiveLoss);

}  // namespace crema
