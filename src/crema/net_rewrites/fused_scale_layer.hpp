// A per-channel Scale in place that takes over work of the layer before it
// (the rewrites fold_batch_norm.cpp and hand_blocked_output.cpp make it):
// - the normalisation of a FoldedBatchNormLayer, y = (x - mean) * scale /
//   std + bias in one pass, and in the backward pass dx = dy * scale / std,
//   the BatchNorm's bottom gradient (unless the pass stops at this layer);
// - the in-place bottom, when its producer hands it over in a layout of its
//   own (a backend's lowering: oneDNN's convolutions hand over their blocked
//   output, dnnl/dnnl_hand_blocked_outputs.cpp): a float CPU forward pass
//   moves it into the blob (the kept copy) and writes the top in that one
//   pass, bit for bit what the move and the plane loop would write.
// GPU passes, and CPU passes without either, are the Scale's own.
#ifndef CREMA_NET_REWRITES_FUSED_SCALE_LAYER_HPP_
#define CREMA_NET_REWRITES_FUSED_SCALE_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/scale_layer.hpp"
#include "crema/net_rewrites/folded_batch_norm_layer.hpp"

namespace crema {

// An in-place bottom its producer left in a layout of its own, for the
// Scale to move into the blob as it reads it.
class HandedOverBottom {
 public:
  virtual ~HandedOverBottom() = default;
  // Where the producer's last pass handed the bottom over and no one took
  // it yet: moves it into `bottom` (outer x channels x inner) and writes
  // top = (bottom - mean_c) * factor_c + bias_c in that one pass (mean and
  // bias null: none), and returns true. Else false: the blob holds the
  // bottom.
  virtual bool MoveInto(int outer, int channels, int inner, const float* mean, const float* factor,
                        const float* bias, float* bottom, float* top) = 0;
};

template <typename Dtype>
class FusedScaleLayer : public ScaleLayer<Dtype> {
 public:
  explicit FusedScaleLayer(const LayerParameter& param) : ScaleLayer<Dtype>(param) {}

  void FoldBatchNorm(FoldedBatchNormLayer<Dtype>* batch_norm) { batch_norm_ = batch_norm; }
  bool folds_batch_norm() const { return batch_norm_ != nullptr; }
  // Whether a backward pass after a folded forward pass writes the
  // BatchNorm's bottom gradient (the pass goes on to it: the default) or
  // this layer's own (the pass ends here).
  void set_fold_backward(bool fold) { fold_backward_ = fold; }
  // For float layers only.
  void TakeBottomFrom(std::shared_ptr<HandedOverBottom> producer) {
    handed_bottom_ = std::move(producer);
  }
  bool takes_handed_bottom() const { return handed_bottom_ != nullptr; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // The forward pass from a handed-over bottom, if there is one.
  bool ForwardFromHandedBottom(const Dtype* mean, const Dtype* std, const Dtype* scale,
                               const Dtype* bias, Dtype* bottom_data, Dtype* top_data);

  FoldedBatchNormLayer<Dtype>* batch_norm_ = nullptr;
  // Whether the last CPU forward pass applied the BatchNorm's normalisation
  // (bottom_copy() then holds the BatchNorm's input).
  bool forward_folded_ = false;
  bool fold_backward_ = true;
  std::shared_ptr<HandedOverBottom> handed_bottom_;
  // Per channel: the factor the handed-over move multiplies by, and zeros for
  // the bias a folded BatchNorm without one adds.
  std::vector<Dtype> channel_factors_, zeros_;
};

}  // namespace crema

#endif  // CREMA_NET_REWRITES_FUSED_SCALE_LAYER_HPP_
