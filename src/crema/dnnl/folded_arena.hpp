// Buffers that folded outputs of one net take by turns (net_rewrites/
// fold_into_convolutions.cpp plans which share a slot: outputs whose lives,
// from the pass that writes one to the last pass that reads it, do not
// overlap), so that a forward pass writes into memory still in cache
// instead of fresh memory for every blob.
//
// Rules it keeps:
// - A slot holds the values of one output at a time, the last that wrote it
//   (holder). An output whose slot another has since written restores its
//   values by running its last pass again (FoldedOutput::Restore), after
//   restoring what that pass read; so every blob still reads as the pass
//   left it.
// - A slot's buffer only grows; the buffers it outgrew are kept while the
//   arena lives, so a pass recorded on one never reads or writes freed
//   memory.
// - Before a pass that would change what an output's last pass read without
//   running that output again (a forward pass that stops before it), and
//   before the net's folded layers go, the outputs are written into their
//   blobs (WriteOutFrom, WriteOutAll).
#ifndef CREMA_DNNL_FOLDED_ARENA_HPP_
#define CREMA_DNNL_FOLDED_ARENA_HPP_

#include <dnnl.hpp>
#include <vector>

namespace crema {

class FoldedOutput;

class FoldedArena {
 public:
  explicit FoldedArena(int slots);
  FoldedArena(const FoldedArena&) = delete;
  FoldedArena& operator=(const FoldedArena&) = delete;

  // Memory of layout `desc` in `slot`, whose buffer grows to its size.
  dnnl::memory Memory(int slot, const dnnl::memory::desc& desc);
  const FoldedOutput* holder(int slot) const { return slots_[slot].holder; }
  void Hold(int slot, const FoldedOutput* output) { slots_[slot].holder = output; }

  // Every folded output of the net, with the index of the net's layer whose
  // pass writes it, in net order.
  void Register(FoldedOutput* output, int layer);
  void Unregister(const FoldedOutput* output);
  // Writes every output written by a layer after `layer` into its blob and
  // has it forget its blocks (its reader reads the blob next).
  void WriteOutFrom(int layer);
  // Writes every output into its blob, in net order (before the layers go).
  void WriteOutAll();

 private:
  struct Slot {
    std::vector<dnnl::memory> buffers;  // the last is the current one
    const FoldedOutput* holder = nullptr;
  };
  struct Registered {
    FoldedOutput* output;
    int layer;
  };
  std::vector<Slot> slots_;
  std::vector<Registered> outputs_;
};

}  // namespace crema

#endif  // CREMA_DNNL_FOLDED_ARENA_HPP_
