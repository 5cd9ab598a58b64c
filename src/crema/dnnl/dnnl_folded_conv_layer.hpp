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
// - Its output stays in oneDNN's layout, and the top blob's memory defers
//   to it (SyncedMemory::Defer): it is moved into Caffe's layout only when
//   someone reads the blob. A folded convolution that reads the blob next
//   (TakeInputFrom) takes it as it lies, while the blob is unchanged since
//   this pass wrote it (its stamp), and so no move happens at all.
// - Where oneDNN makes no primitive for a shape, ready() is false and the
//   caller runs the plain layers instead.
#ifndef CREMA_DNNL_DNNL_FOLDED_CONV_LAYER_HPP_
#define CREMA_DNNL_DNNL_FOLDED_CONV_LAYER_HPP_

#include <cstdint>
#include <dnnl.hpp>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/conv_layer.hpp"
#include "crema/layers/depthwise_conv_layer.hpp"
#include "crema/syncedmem.hpp"

namespace crema {

// The layers folded into a convolution: each pointer null where the chain
// has no such layer. The blobs are the layers' own (their values are read
// at each pass).
struct ConvolutionFolds {
  // A BatchNorm on stored statistics: its running sums of means and
  // variances, the factor that turns them into averages (blobs 0-2), eps.
  const Blob<float>* mean_sums = nullptr;
  const Blob<float>* variance_sums = nullptr;
  const Blob<float>* average_factor = nullptr;
  float eps = 0;
  // A per-channel Scale's learned scale and bias (null without bias_term).
  const Blob<float>* scale = nullptr;
  const Blob<float>* shift = nullptr;
  // The activation last: ReLU (with its negative slope) or ReLU6.
  enum class Clamp { kNone, kReLU, kReLU6 } clamp = Clamp::kNone;
  float negative_slope = 0;
};

struct DnnlFoldedPrimitives;

// What a folded convolution offers the next one: its output in oneDNN's
// layout, while the blob still holds the same values.
class FoldedConvolutionOutput {
 public:
  virtual ~FoldedConvolutionOutput() = default;
  // The blocked output of the last pass, if `top` is unchanged since that
  // pass wrote it; else null.
  virtual const dnnl::memory* BlockedOutput(Blob<float>* top) const = 0;
  // The layout of that output for the current shape (null: none, or the
  // plain one), for the reader to ask its primitive for.
  virtual const dnnl::memory::desc* BlockedOutputDesc() const = 0;
};

template <template <typename> class Reference>
class DnnlFoldedConvolution : public DnnlTwin<float, Reference, DnnlFoldedPrimitives>,
                              public FoldedConvolutionOutput,
                              public DeferredContents {
 public:
  DnnlFoldedConvolution(const LayerParameter& param, const ConvolutionFolds& folds);
  // Writes an output a memory still defers to.
  ~DnnlFoldedConvolution() override;
  // Before new primitives replace the output's buffer, a memory still
  // deferring to it is written.
  void Reshape(const std::vector<Blob<float>*>& bottom,
               const std::vector<Blob<float>*>& top) override;
  void WriteTo(void* host) override;
  // Reads its bottom from `producer`'s blocked output where it can.
  void TakeInputFrom(const FoldedConvolutionOutput* producer) { producer_ = producer; }
  // Whether the current shape runs folded (set by Reshape).
  bool ready() const { return this->uses_dnnl(); }
  const dnnl::memory* BlockedOutput(Blob<float>* top) const override;
  const dnnl::memory::desc* BlockedOutputDesc() const override;

 protected:
  bool MakePrimitives(const std::vector<Blob<float>*>& bottom, const std::vector<Blob<float>*>& top,
                      DnnlFoldedPrimitives* p) override;
  const char* DnnlOperation() const override { return "inference convolution"; }
  // The folded pass; callers check ready() first.
  void Forward_cpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;

 private:
  // The stamps of every blob the packed weights and bias come from.
  std::vector<uint64_t> SourceStamps() const;
  // Folds the chain into weights and bias and packs the weights.
  void FoldAndPack(DnnlFoldedPrimitives* p);
  // Writes the output into the memory that defers to it, if one still does.
  void EndDeferral();

  const ConvolutionFolds folds_;
  const FoldedConvolutionOutput* producer_ = nullptr;
  std::vector<uint64_t> packed_stamps_;    // empty: nothing packed yet
  uint64_t written_stamp_ = 0;             // the top's stamp after the last pass wrote it
  std::weak_ptr<SyncedMemory> deferring_;  // the memory the output went to
  std::vector<int> bottom_shape_;          // the shape the primitives are for
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_FOLDED_CONV_LAYER_HPP_
