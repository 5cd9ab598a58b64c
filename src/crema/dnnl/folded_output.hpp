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
//   drops it. Its arguments must stay as they were until then, but for
//   another folded output's blocks it read, which it restores first.
// - An output may write its blocks into a slot of the net's arena
//   (folded_arena.hpp) that other outputs write by turns, where its pass can
//   run again from what it read (a primitive reading blocks, not a blob's
//   memory). It keeps its last pass, and runs it again (after restoring
//   what it read) whenever its values are asked for after another output
//   wrote the slot (Restore).
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
#include "crema/dnnl/folded_arena.hpp"
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
  // The folded output whose blocks that pass read (null: none).
  const FoldedOutput* PendingInput() const { return pass_input_; }
  // Runs the pass left pending, if any.
  void RunPending() const;
  // Makes the blocks hold this output's values: runs the pass left pending,
  // or the last pass again where another output wrote the arena slot since.
  void Restore() const;
  // Joins the net's arena: registered as the output of the net's layer
  // `layer`, and, where slot >= 0, writing its blocks into that slot for
  // every shape whose pass can run again.
  void JoinArena(std::shared_ptr<FoldedArena> arena, int layer, int slot);
  // Whether the blocks of the current shape lie in an arena slot.
  bool Pooled() const { return pooled_; }
  // Whether its last pass was left pending.
  bool HasPending() const { return pending_.has_value(); }
  // Ends the deferral (the blob takes the values); with `forget`, the
  // blocks are no longer this output's (a reader reads the blob).
  void WriteOut(bool forget);
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
  // its move into `plain` where they differ, none where they are the same;
  // in the arena's slot where the pass is `restorable` (it reads no blob's
  // memory). Ends a deferral to the old buffer first.
  void SetUpOutput(const dnnl::memory::desc& chosen, const dnnl::memory::desc& plain,
                   bool restorable = false);
  // Whether the output goes to the blocked buffer (else to the top's memory).
  bool OutputBlocked() const { return static_cast<bool>(blocked_); }
  // Where the primitive writes this pass: the blocked buffer, or the top's
  // memory in Caffe's layout. Call Written(top) (or Run) after the pass.
  dnnl::memory OutputFor(Blob<float>* top);
  void Written(Blob<float>* top);
  // Runs `pass`, which writes OutputFor(top) and read `input`'s blocks
  // (null: no folded output's), and marks it Written; an output in an arena
  // slot keeps it to run again.
  void Run(Blob<float>* top, Pass pass, const FoldedOutput* input);
  // Instead of Run: leaves the pass pending.
  void WrittenLater(Blob<float>* top, Pass pass, const FoldedOutput* input);
  // Writes the output into the memory that defers to it, if one still does.
  void EndDeferral();
  // What a folded layer reads bottom from: its producer's blocks, where the
  // rule above allows (*read: the producer), else the bottom moved by
  // `move` into `own` (or the bottom itself where `own` is empty: the
  // primitive reads Caffe's layout; *read: null).
  static dnnl::memory Input(const FoldedOutput* producer, Blob<float>* bottom,
                            const dnnl::memory::desc& plain, const dnnl::memory& own,
                            const dnnl::reorder& move, const FoldedOutput** read = nullptr);

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
  // The arena (null: none), this output's slot in it (-1: none), whether
  // the blocks of the current shape lie there and could (restorable_).
  std::shared_ptr<FoldedArena> arena_;
  int slot_ = -1;
  bool restorable_ = false, pooled_ = false;
  // In the arena: the last pass, to run again.
  std::optional<Pass> last_pass_;
  // The folded output whose blocks the last pass (or the pending one) read.
  const FoldedOutput* pass_input_ = nullptr;
};

// What every folded layer is: a oneDNN twin of its reference layer whose
// output is a FoldedOutput, ready where it made primitives for the shape.
template <template <typename> class Reference, typename Primitives>
class DnnlFoldedTwin : public DnnlTwin<float, Reference, Primitives>, public FoldedOutput {
 public:
  explicit DnnlFoldedTwin(const LayerParameter& param)
      : DnnlTwin<float, Reference, Primitives>(param) {}
  // Whether the current shape runs folded (set by Reshape).
  bool ready() const { return this->uses_dnnl(); }
  void RunFolded(const std::vector<Blob<float>*>& bottom,
                 const std::vector<Blob<float>*>& top) override {
    this->Forward_cpu(bottom, top);
  }
};

}  // namespace crema

#endif  // CREMA_DNNL_FOLDED_OUTPUT_HPP_
