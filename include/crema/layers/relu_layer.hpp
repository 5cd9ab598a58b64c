// ReLU: y = max(0, x) + negative_slope * min(0, x) (leaky when the slope is
// non-zero).
#ifndef CREMA_LAYERS_RELU_LAYER_HPP_
#define CREMA_LAYERS_RELU_LAYER_HPP_

#include <utility>
#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class ReLULayer : public NeuronLayer<Dtype> {
 public:
  explicit ReLULayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  const char* type() const override { return "ReLU"; }

  // Folding into the Scale just before it (the net decides:
  // Net::FoldIntoScales; ScaleLayer::FoldReLU): on the CPU the Scale then
  // rectifies its output and masks its top gradient itself. A plain ReLU
  // only (no negative slope).
  bool CanFold() const { return this->layer_param_.relu_param().negative_slope() == 0; }
  void set_folded(bool folded) { folded_ = folded; }
  // The Scale rectified this forward pass's data: the next CPU forward pass
  // has nothing left to do.
  void MarkForwardFolded() { forward_folded_ = true; }
  // Whether a backward pass leaves its mask to the Scale (the default; the
  // net clears it for a backward pass that stops at this layer).
  void set_fold_backward(bool fold) { fold_backward_ = fold; }
  // True (once) when the last CPU backward pass left its mask to the Scale.
  bool TakePendingMask() { return std::exchange(mask_pending_, false); }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  // For the CPU bodies (this class's and the oneDNN one's): true when the
  // folding Scale did this forward pass's work, or when a backward pass has
  // nothing to do (no gradient wanted, or the Scale will apply the mask).
  bool SkipFoldedForward() { return std::exchange(forward_folded_, false); }
  bool SkipFoldedBackward(bool propagate_down);

 private:
  bool folded_ = false;
  bool forward_folded_ = false;
  bool fold_backward_ = true;
  bool mask_pending_ = false;
};

}  // namespace crema

#endif  // CREMA_LAYERS_RELU_LAYER_HPP_
