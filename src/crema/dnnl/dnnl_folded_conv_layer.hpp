// A convolution with the per-channel layers after it folded in, for a net
// that runs forward (the rewrite net_rewrites/fold_into_convolutions.cpp
// makes it for TEST-phase nets in CPU mode): a BatchNorm on stored
// statistics and a Scale become factors of the weights and terms of the
// bias, and a ReLU or ReLU6 the post-op of oneDNN's inference convolution,
// so the chain is one pass over the output instead of four.
//
// Rules it keeps:
// - The folded weights are packed into oneDNN's layout once, and packed
//   again only when a blob they come from changes (SyncedMemory::stamp):
//   a forward pass reads the weights as they are, never a stale packing.
// - Its output stays in oneDNN's layout, and the next folded layer reads it
//   as it lies (folded_output.hpp).
// - Where oneDNN makes no primitive for a shape, ready() is false and the
//   caller runs the plain layers instead.
// - A 3x3 depthwise convolution (stride 1 or 2, padding 1) that is the only
//   reader of a pointwise one (1x1, stride 1) computes both in one oneDNN
//   primitive where oneDNN fuses their shapes (FusePointwise): in one
//   kernel, the pointwise output never written to memory and read back, or
//   in two, the pointwise output in the primitive's scratchpad, the same
//   memory each pass. The pointwise layer's pass leaves its output pending
//   (folded_output.hpp); it is computed only if someone reads it.
#ifndef CREMA_DNNL_DNNL_FOLDED_CONV_LAYER_HPP_
#define CREMA_DNNL_DNNL_FOLDED_CONV_LAYER_HPP_

#include <cstdint>
#include <dnnl.hpp>
#include <functional>
#include <optional>
#include <vector>

#include "crema/dnnl/folded_output.hpp"
#include "crema/layers/conv_layer.hpp"
#include "crema/layers/depthwise_conv_layer.hpp"
#include "crema/net_rewrites/convolution_folds.hpp"

namespace crema {

// The layers folded into a convolution: the per-channel ones
// (convolution_folds.hpp) and the activation last, ReLU (with its negative
// slope) or ReLU6.
struct ConvolutionFolds : ChannelFolds {
  FoldedActivation activation;
};

struct DnnlFoldedPrimitives;
// Instantiated in the .cpp, where the primitives are complete; never here.
extern template class DnnlTwin<float, ConvolutionLayer, DnnlFoldedPrimitives>;
extern template class DnnlTwin<float, DepthwiseConvolutionLayer, DnnlFoldedPrimitives>;

template <template <typename> class Reference>
class DnnlFoldedConvolution : public DnnlFoldedTwin<Reference, DnnlFoldedPrimitives> {
 public:
  DnnlFoldedConvolution(const LayerParameter& param, const ConvolutionFolds& folds);
  // Reads its bottom from `producer`'s blocked output where it can.
  void TakeInputFrom(const FoldedOutput* producer) { producer_ = producer; }
  // Computes `pointwise` (its producer, whose output only this layer
  // reads) fused with its own pass, for each shape oneDNN has a fused
  // kernel for; calls pointwise->LeaveOutputToReader for each shape.
  void FusePointwise(DnnlFoldedConvolution<ConvolutionLayer>* pointwise);
  // Whether this layer's passes leave their output pending for its reader,
  // which computes it fused with its own pass.
  void LeaveOutputToReader(bool leave) { leave_output_to_reader_ = leave; }
  // For a reader that runs this layer's pending pass fused with its own:
  // this layer's primitive with the post-ops `append` adds after its
  // activation, reading the pending pass's arguments (DNNL_ARG_SRC,
  // WEIGHTS, BIAS). None where the current shape is not ready, the layer
  // reads or writes Caffe's layout, or oneDNN has no optimised kernel
  // (nor, where `parts` allows, optimised parts: OptimisedParts).
  std::optional<dnnl::convolution_forward::primitive_desc> FusedWith(
      const std::function<void(dnnl::post_ops*)>& append, bool parts = false) const;

 protected:
  bool MakePrimitives(const std::vector<Blob<float>*>& bottom, const std::vector<Blob<float>*>& top,
                      DnnlFoldedPrimitives* p) override;
  const char* DnnlOperation() const override { return "inference convolution"; }
  // The folded pass; callers check ready() first.
  void Forward_cpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;

 private:
  // Whether to ask for oneDNN's Winograd kernels first: the layer asks for
  // them and FoldedWinogradPays for its shape.
  bool WinogradPays() const;
  // Folds the chain into weights and bias and packs the weights.
  void FoldAndPack(DnnlFoldedPrimitives* p);
  // The fused primitive of pointwise_ and this layer into p, where oneDNN
  // has a fused kernel for the shapes; returns whether it made one.
  bool MakeFused(const dnnl::convolution_forward::primitive_desc& own, DnnlFoldedPrimitives* p);
  // pointwise_'s pending pass and this layer's as one pass writing `dst`,
  // where the fused primitive was made and the pending pass is the one it
  // reads; else none.
  std::optional<FoldedOutput::Pass> FusedPass(const FoldedOutput::Pass* pending,
                                              const dnnl::memory& dst) const;

  const ConvolutionFolds folds_;
  const FoldedOutput* producer_ = nullptr;
  DnnlFoldedConvolution<ConvolutionLayer>* pointwise_ = nullptr;
  bool leave_output_to_reader_ = false;
  FoldSources packed_from_;  // what the packed weights and bias come from
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_FOLDED_CONV_LAYER_HPP_
