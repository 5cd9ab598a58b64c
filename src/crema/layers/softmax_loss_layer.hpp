// SoftmaxWithLoss: the multinomial logistic loss of the softmax of bottom 0,
// loss = -sum log(max(p[label], FLT_MIN)) / normalizer, with one integer class
// label in bottom 1 per (outer, inner) position of the softmax axis. One
// layer rather than Softmax + MultinomialLogisticLoss because its gradient,
// p - onehot(label), is numerically stable. An optional second top holds the
// probabilities, an optional third (R-FCN's, for hard-example mining) each
// position's loss before normalizing, 0 where the label is ignored, in the
// label's shape; it is an output (loss weight 0).
// SoftmaxWithLossOHEM (py-R-FCN's name for the same layer) is this layer.
#ifndef CREMA_LAYERS_SOFTMAX_LOSS_LAYER_HPP_
#define CREMA_LAYERS_SOFTMAX_LOSS_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/loss_layer.hpp"
#include "crema/layers/softmax_layer.hpp"

namespace crema {

template <typename Dtype>
class SoftmaxWithLossLayer : public LossLayer<Dtype> {
 public:
  explicit SoftmaxWithLossLayer(const LayerParameter& param) : LossLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "SoftmaxWithLoss"; }
  int ExactNumTopBlobs() const override { return -1; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 3; }

 protected:
  bool ReadsLabelSmoothing() const override { return true; }
  bool ReadsClassWeights() const override { return true; }
  Dtype ClassesLoss(const Dtype* first) const;
  void ReadClassWeights(const LossParameter& param);
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  std::unique_ptr<SoftmaxLayer<Dtype>> softmax_layer_;
  Blob<Dtype> prob_;
  std::vector<Blob<Dtype>*> softmax_bottom_vec_;
  std::vector<Blob<Dtype>*> softmax_top_vec_;
  bool has_ignore_label_ = false;
  int ignore_label_ = 0;
  // loss_param.label_smoothing, in [0, 1): the target puts 1 - smoothing_ on
  // the label and smoothing_ / K on each of the K classes.
  Dtype smoothing_ = 0;
  // SegNet's weight_by_label_freqs with class_weighting: each position's
  // loss and gradient times its label's weight (the normalizer unchanged);
  // empty when not asked for.
  std::vector<Dtype> class_weights_;
  // The weighted loss has CPU bodies only; the GPU entry points call them.
  bool weighted() const { return !class_weights_.empty(); }
  LossParameter::NormalizationMode normalization_ = LossParameter::VALID;
  // Labels are indexed as outer_num_ x inner_num_ around the softmax axis.
  int outer_num_ = 0;
  int num_classes_ = 0;
  int inner_num_ = 0;
  // GPU scratch, one value per label position: its loss, whether it counts
  // (1) or is ignored (0), and whether its label is out of range (1).
  Blob<Dtype> position_loss_;
  Blob<Dtype> position_valid_;
  Blob<Dtype> position_bad_label_;
};

// py-R-FCN's type name for the layer above.
template <typename Dtype>
class SoftmaxWithLossOHEMLayer : public SoftmaxWithLossLayer<Dtype> {
 public:
  explicit SoftmaxWithLossOHEMLayer(const LayerParameter& param)
      : SoftmaxWithLossLayer<Dtype>(param) {}
  const char* type() const override { return "SoftmaxWithLossOHEM"; }
};

}  // namespace crema

#endif  // CREMA_LAYERS_SOFTMAX_LOSS_LAYER_HPP_
