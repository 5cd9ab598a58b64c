// SmoothL1Loss, as the detection forks define it (py-faster-rcnn's, with
// sigma; SSD's, with one weights blob): for x = w_in * (a - b),
//   f(x) = 0.5 * sigma^2 * x^2      where |x| < 1 / sigma^2
//        = |x| - 0.5 / sigma^2      elsewhere,
// loss = sum(w_out * f(x)) / N, N the items along axis 0, or what R-FCN's
// loss_param.normalization says where the file names one (FULL and VALID:
// the items times the axes after 1, BATCH_SIZE: the items, NONE: 1,
// PRE_FIXED: pre_fixed_normalizer).
// Bottoms: prediction a, target b, then either nothing (weights 1), one
// blob w_in (SSD's and R-FCN's form, w_out = 1), or w_in and w_out
// (py-faster-rcnn's), each the size of a. a and b get gradients; the
// weights do not.
// R-FCN's optional second top holds each item's loss for its hard-example
// mining: sum over axis 1 of w_out * f(x), shape a's with axis 1 of 1, not
// normalized; it is an output (loss weight 0), as in R-FCN.
// SmoothL1LossOHEM (py-R-FCN's name for the same layer) is this layer.
#ifndef CREMA_LAYERS_SMOOTH_L1_LOSS_LAYER_HPP_
#define CREMA_LAYERS_SMOOTH_L1_LOSS_LAYER_HPP_

#include <vector>

#include "crema/layers/loss_layer.hpp"

namespace crema {

template <typename Dtype>
class SmoothL1LossLayer : public LossLayer<Dtype> {
 public:
  explicit SmoothL1LossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "SmoothL1Loss"; }
  int ExactNumBottomBlobs() const override { return -1; }
  int MinBottomBlobs() const override { return 2; }
  int MaxBottomBlobs() const override { return 4; }
  int ExactNumTopBlobs() const override { return -1; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index < 2; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  // The weights, null where the bottom is absent.
  const Blob<Dtype>* inside(const std::vector<Blob<Dtype>*>& bottom) const {
    return bottom.size() > 2 ? bottom[2] : nullptr;
  }
  const Blob<Dtype>* outside(const std::vector<Blob<Dtype>*>& bottom) const {
    return bottom.size() > 3 ? bottom[3] : nullptr;
  }

  // The weights have no gradient: asking for one is an error naming them.
  void RequireNoWeightGradient(const std::vector<bool>& propagate_down) const;

  // The per-item losses of top 1 from errors_ (CPU; the GPU body has its own).
  void ItemLosses_cpu(const Blob<Dtype>& prediction, Blob<Dtype>* items) const;
  Dtype LossNormalizer(const Blob<Dtype>& prediction) const;

  Dtype sigma2_ = 1;
  LossParameter::NormalizationMode normalization_ = LossParameter::BATCH_SIZE;
  // Forward keeps d loss / d a per value, before the 1 / N and the top's
  // gradient: w_out * f'(x) * w_in.
  Blob<Dtype> slope_;
  // w_out * f(x) per value, and ones to sum them on the device.
  Blob<Dtype> errors_;
  Blob<Dtype> ones_;
};

// py-R-FCN's type name for the layer above.
template <typename Dtype>
class SmoothL1LossOHEMLayer : public SmoothL1LossLayer<Dtype> {
 public:
  explicit SmoothL1LossOHEMLayer(const LayerParameter& param) : SmoothL1LossLayer<Dtype>(param) {}
  const char* type() const override { return "SmoothL1LossOHEM"; }
};

}  // namespace crema

#endif  // CREMA_LAYERS_SMOOTH_L1_LOSS_LAYER_HPP_
