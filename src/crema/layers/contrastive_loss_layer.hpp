// ContrastiveLoss: for pairs of feature vectors a_n, b_n (bottoms 0 and 1, N
// items each) and a pair label y_n (bottom 2: 1 = similar, 0 = dissimilar), with
// d_n = ||a_n - b_n||^2,
//   loss = sum_n [ y_n d_n + (1 - y_n) max(margin - sqrt(d_n), 0)^2 ] / (2N)
// or, with legacy_version, max(margin - d_n, 0) for dissimilar pairs. It pulls
// similar pairs together and pushes dissimilar ones at least `margin` apart.
#ifndef CREMA_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_
#define CREMA_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_

#include <vector>

#include "crema/layers/loss_layer.hpp"

namespace crema {

template <typename Dtype>
class ContrastiveLossLayer : public LossLayer<Dtype> {
 public:
  explicit ContrastiveLossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "ContrastiveLoss"; }
  int ExactNumBottomBlobs() const override { return 3; }
  // Both feature bottoms have a gradient; the pair labels do not.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 2; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  // The loss of the pairs given their squared distances (on the host).
  Dtype LossFromDistances(const Dtype* squared_distance, const Dtype* pair_label) const;

  // a - b and ||a_n - b_n||^2, kept from forward for backward.
  Blob<Dtype> difference_;
  Blob<Dtype> squared_distance_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_
