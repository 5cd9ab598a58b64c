// The output side of a folded layer (net_rewrites/fold_into_convolutions.cpp:
// layers of a net that runs forward computed on oneDNN's inference
// primitives), and how the next folded layer reads it.
//
// Rules it keeps:
// - Where the primitive's output layout is not Caffe's (channel blocks), the
//   output stays in that layout and the top blob's memory defers to it
//   (SyncedMemory::Defer): it is moved into Caffe's layout only when someone
//   reads the blob.
// - A folded layer that reads the blob next (Input) takes the blocks as they
//   lie, while the blob is unchanged since the producer wrote it (its
//   stamp) and they are in the layout the reader's primitive was made for;
//   else it moves the blob's values into its own buffer.
// - Before the output buffer is remade or the layer is destroyed, a memory
//   that still defers to it is written (EndDeferral).
// - A pass may leave its output to be computed later (WrittenLater: a
//   pointwise convolution whose depthwise reader computes both in one
//   primitive). The pass left pending runs, with the arguments it was given,
//   when anyone reads the top or the blocks, before the buffer is remade,
//   and when its owner asks (RunPending); a pass that writes the output
//   drops it. Its arguments must stay as they were until then.
#ifndef CREMA_DNNL_FOLDED_OUTPUT_HPP_
#define CREMA_DNNL_FOLDED_OUTPUT_HPP_

#include <cstdint>
#include <dnnl.hpp>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "crema/blob.hpp"
#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/syncedmem.hpp"

namespace crema {

// The activation layout folded layers ask oneDNN for first, for a tensor of
// Caffe's layout `plain` (axis 1 its channels): channels in blocks of one
// vector register (DnnlActivationBlocks) for at least a block's channels,
// Caffe's layout for fewer; oneDNN's own choice (format `any`) on a CPU
// without blocks.
dnnl::memory::desc PreferredActivation(const dnnl::memory::desc& plain);
// The output layout folded layers ask for first: channel blocks whatever
// the channel count (a last block partly padding; the move into Caffe's
// layout when the blob is read is small), oneDNN's own choice on a CPU
// without blocks.
dnnl::memory::desc PreferredOutput(const dnnl::memory::desc& plain);

// Whether oneDNN gave the primitive an optimised kernel rather than its
// reference one: folded layers try their layouts until one has.
inline bool OptimisedKernel(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) != 0;
}
// Whether oneDNN made a fused convolution it has no single kernel for out
// of optimised ones: its stand-in runs the parts in turn, the intermediate
// in the primitive's scratchpad, which every pass reuses.
inline bool OptimisedParts(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  const std::string stand_in = "ref_fused_convolution:";
  return impl.rfind(stand_in, 0) == 0 && impl.find("ref", stand_in.size()) == std::string::npos;
}

// The activation a folded layer applies last (a ReLU or ReLU6 in place
// after it), as oneDNN's post-op.
struct FoldedActivation {
  enum class Kind { kNone, kReLU, kReLU6 } kind = Kind::kNone;
  float negative_slope = 0;  // kReLU's
  dnnl::post_ops PostOps() const;
  void AppendTo(dnnl::post_ops* ops) const;
};

class FoldedOutput : public DeferredContents {
 public:
  // A oneDNN primitive and its arguments: a pass that writes the output.
  struct Pass {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> arguments;
  };

  ~FoldedOutput() override;
  // The blocked output of the last pass, if `top` is unchanged since that
  // pass wrote it (running it first if it was left pending); else null.
  const dnnl::memory* BlockedOutput(Blob<float>* top) const;
  // The last pass, if it was left pending and `top` is unchanged since;
  // else null.
  const Pass* PendingFor(Blob<float>* top) const;
  // Runs the pass left pending, if any.
  void RunPending() const;
  // The layout of that output for the current shape (null: none, or the
  // plain one), for a reader to make its primitive for.
  const dnnl::memory::desc* BlockedOutputDesc() const;
  void WriteTo(void* host) override;
  // The folded pass alone, for the chain that already reshaped the layer
  // (Layer::Forward would reshape it again); callers check it is ready.
  virtual void RunFolded(const std::vector<Blob<float>*>& bottom,
                         const std::vector<Blob<float>*>& top) = 0;

 protected:
  // For a primitive whose output layout is `chosen`: a blocked buffer and
  // its move into `plain` where they differ, none where they are the same.
  // Ends a deferral to the old buffer first.
  void SetUpOutput(const dnnl::memory::desc& chosen, const dnnl::memory::desc& plain);
  // Whether the output goes to the blocked buffer (else to the top's memory).
  bool OutputBlocked() const { return static_cast<bool>(blocked_); }
  // Where the primitive writes this pass: the blocked buffer, or the top's
  // memory in Caffe's layout. Call Written(top) after the pass.
  dnnl::memory OutputFor(Blob<float>* top);
  void Written(Blob<float>* top);
  // Instead of running `pass` (which writes OutputFor(top), the blocked
  // buffer) and Written: leaves it pending.
  void WrittenLater(Blob<float>* top, Pass pass);
  // Writes the output into the memory that defers to it, if one still does.
  void EndDeferral();
  // What a folded layer reads bottom from: its producer's blocks, where the
  // rule above allows, else the bottom moved by `move` into `own` (or the
  // bottom itself where `own` is empty: the primitive reads Caffe's layout).
  static dnnl::memory Input(const FoldedOutput* producer, Blob<float>* bottom,
                            const dnnl::memory::desc& plain, const dnnl::memory& own,
                            const dnnl::reorder& move);

 private:
  dnnl::memory::desc plain_, blocked_desc_;
  dnnl::memory blocked_;  // empty: the output is written in Caffe's layout
  dnnl::reorder move_out_;
  uint64_t written_stamp_ = 0;             // the top's stamp after the last pass wrote it
  std::weak_ptr<SyncedMemory> deferring_;  // the memory the output went to
  // The last pass, where it is left pending (WrittenLater). Running it fills
  // the blocked buffer with the values the output already stands for, so
  // readers of a const output may run it.
  mutable std::optional<Pass> pending_;
};

// What every folded layer is: a oneDNN twin of its reference layer whose
// output is a FoldedOutput, ready where it made primitives for the shape.
template <template <typename> class Reference, typename Primitives>
class DnnlFoldedTwin : public DnnlTwin<float, Reference, Primitives>, public FoldedOutput {
 public:
  explicit DnnlFoldedTwin(const LayerParameter& param)
      : DnnlTwin<float, Reference, Primitives>(param, false) {}
  // Whether the current shape runs folded (set by Reshape).
  bool ready() const { return this->uses_dnnl(); }
  void RunFolded(const std::vector<Blob<float>*>& bottom,
                 const std::vector<Blob<float>*>& top) override {
    this->Forward_cpu(bottom, top);
  }
};

}  // namespace crema

#endif  // CREMA_DNNL_FOLDED_OUTPUT_HPP_
