// A BatchNorm on stored statistics whose normalisation a FusedScaleLayer
// right after it applies (the rewrite fold_batch_norm.cpp makes the pair).
// Its CPU forward pass computes the statistics only and leaves the
// normalisation pending for the Scale, which then makes one pass over the
// data each way instead of two; the Scale's backward pass writes this
// layer's bottom gradient too. Results differ from the unfolded pair's by
// float rounding only. GPU passes are the BatchNorm's own.
#ifndef CREMA_NET_REWRITES_FOLDED_BATCH_NORM_LAYER_HPP_
#define CREMA_NET_REWRITES_FOLDED_BATCH_NORM_LAYER_HPP_

#include <utility>
#include <vector>

#include "crema/layers/batch_norm_layer.hpp"

namespace crema {

template <typename Dtype>
class FoldedBatchNormLayer : public BatchNormLayer<Dtype> {
 public:
  explicit FoldedBatchNormLayer(const LayerParameter& param) : BatchNormLayer<Dtype>(param) {}

  // True (once) when the last CPU forward pass left its normalisation to the
  // Scale, which applies it from mean() and std().
  bool TakePendingNormalization() { return std::exchange(normalization_pending_, false); }
  const Dtype* mean() const { return this->mean_.cpu_data(); }
  const Dtype* std() const { return this->std_.cpu_data(); }
  // A forward pass that stops at this layer: applies a pending
  // normalisation to the (in-place) top.
  void FinishForward(Blob<Dtype>* top);
  // The Scale wrote this layer's bottom gradient: the next CPU backward
  // pass has nothing left to do.
  void MarkGradientWritten() { gradient_written_ = true; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  bool normalization_pending_ = false;
  bool gradient_written_ = false;
};

}  // namespace crema

#endif  // CREMA_NET_REWRITES_FOLDED_BATCH_NORM_LAYER_HPP_
