#include "crema/dnnl/folded_output.hpp"

#include <utility>

#include "crema/dnnl/dnnl.hpp"

namespace crema {

dnnl::memory::desc PreferredActivation(const dnnl::memory::desc& plain) {
  const DnnlChannelBlocks blocks = DnnlActivationBlocks();
  const dnnl::memory::dims dims = plain.dims();
  if (blocks.width == 0) {
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
  }
  if (dims[1] < blocks.width) return plain;
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, blocks.tag);
}

dnnl::post_ops FoldedActivation::PostOps() const {
  dnnl::post_ops ops;
  AppendTo(&ops);
  return ops;
}

void FoldedActivation::AppendTo(dnnl::post_ops* ops) const {
  if (kind == Kind::kReLU) {
    ops->append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, negative_slope, 0.0f);
  } else if (kind == Kind::kReLU6) {
    ops->append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f);
  }
}

dnnl::memory::desc PreferredOutput(const dnnl::memory::desc& plain) {
  const DnnlChannelBlocks blocks = DnnlActivationBlocks();
  return dnnl::memory::desc(plain.dims(), dnnl::memory::data_type::f32,
                            blocks.width == 0 ? dnnl::memory::format_tag::any : blocks.tag);
}

namespace {

// Whether two memories have one layout, compared where oneDNN keeps them
// (memory::get_desc copies each: this runs every pass).
bool SameLayout(const dnnl::memory& a, const dnnl::memory& b) {
  const dnnl_memory_desc_t* da = nullptr;
  const dnnl_memory_desc_t* db = nullptr;
  dnnl::error::wrap_c_api(dnnl_memory_get_memory_desc(a.get(), &da), "memory layout");
  dnnl::error::wrap_c_api(dnnl_memory_get_memory_desc(b.get(), &db), "memory layout");
  return dnnl_memory_desc_equal(da, db) != 0;
}

}  // namespace

FoldedOutput::~FoldedOutput() {
  if (arena_) {
    // The first of the net's folded outputs to go writes them all, while
    // every pass they may run again still has what it read.
    arena_->WriteOutAll();
    arena_->Unregister(this);
  }
  EndDeferral();
}

const dnnl::memory* FoldedOutput::BlockedOutput(Blob<float>* top) const {
  if (!blocked_ || written_stamp_ == 0 || top->data()->stamp() != written_stamp_) return nullptr;
  Restore();
  return &blocked_;
}

const FoldedOutput::Pass* FoldedOutput::PendingFor(Blob<float>* top) const {
  if (!pending_ || top->data()->stamp() != written_stamp_) return nullptr;
  return &*pending_;
}

void FoldedOutput::RunPending() const {
  if (!pending_) return;
  if (pass_input_) pass_input_->Restore();
  DnnlRun(pending_->primitive, pending_->arguments);
  pending_.reset();
}

void FoldedOutput::Restore() const {
  if (pending_) {
    RunPending();
    return;
  }
  if (!pooled_ || !last_pass_ || arena_->holder(slot_) == this) return;
  if (pass_input_) pass_input_->Restore();
  DnnlRun(last_pass_->primitive, last_pass_->arguments);
  arena_->Hold(slot_, this);
}

void FoldedOutput::JoinArena(std::shared_ptr<FoldedArena> arena, int layer, int slot) {
  CHECK(!arena_) << "a folded output joins one arena";
  arena_ = std::move(arena);
  arena_->Register(this, layer);
  slot_ = slot;
  // Joined at set-up, before any pass: the blocks move to the slot now.
  if (slot_ >= 0 && blocked_ && restorable_) {
    blocked_ = arena_->Memory(slot_, blocked_desc_);
    pooled_ = true;
  }
}

void FoldedOutput::WriteOut(bool forget) {
  EndDeferral();
  if (!forget) return;
  pending_.reset();
  last_pass_.reset();
  written_stamp_ = 0;
}

const dnnl::memory::desc* FoldedOutput::BlockedOutputDesc() const {
  return blocked_ ? &blocked_desc_ : nullptr;
}

void FoldedOutput::WriteTo(void* host) {
  Restore();
  DnnlRun(move_out_, {{DNNL_ARG_FROM, blocked_}, {DNNL_ARG_TO, Wrap(plain_, host)}});
}

void FoldedOutput::SetUpOutput(const dnnl::memory::desc& chosen, const dnnl::memory::desc& plain,
                               bool restorable) {
  EndDeferral();
  pending_.reset();  // where no memory defers to it, no one reads its values
  last_pass_.reset();
  pass_input_ = nullptr;
  written_stamp_ = 0;
  plain_ = plain;
  blocked_ = dnnl::memory();
  move_out_ = dnnl::reorder();
  restorable_ = restorable;
  pooled_ = false;
  if (chosen == plain) return;
  blocked_desc_ = chosen;
  pooled_ = arena_ && slot_ >= 0 && restorable_;
  blocked_ = pooled_ ? arena_->Memory(slot_, chosen) : dnnl::memory(chosen, DnnlEngine());
  move_out_ =
      dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), chosen, DnnlEngine(), plain));
}

dnnl::memory FoldedOutput::OutputFor(Blob<float>* top) {
  if (!blocked_) return Wrap(plain_, top->mutable_cpu_data());
  // The buffer is about to change: a memory that still defers to it and is
  // no longer the top's (the blob took new memory) is written first.
  if (deferring_.lock() != top->data()) EndDeferral();
  pending_.reset();  // the top's values are this pass's now
  if (pooled_) {
    // The slot is this pass's to write: what the last pass left there goes.
    last_pass_.reset();
    written_stamp_ = 0;
  }
  return blocked_;
}

void FoldedOutput::Written(Blob<float>* top) {
  const std::shared_ptr<SyncedMemory>& memory = top->data();
  if (blocked_) {
    memory->Defer(this);
    deferring_ = memory;
  }
  written_stamp_ = memory->stamp();
}

void FoldedOutput::Run(Blob<float>* top, Pass pass, const FoldedOutput* input) {
  DnnlRun(pass.primitive, pass.arguments);
  if (pooled_) {
    last_pass_ = std::move(pass);
    pass_input_ = input;
    arena_->Hold(slot_, this);
  }
  Written(top);
}

void FoldedOutput::WrittenLater(Blob<float>* top, Pass pass, const FoldedOutput* input) {
  CHECK(blocked_ && !pooled_) << "a pass left pending writes a blocked buffer of its own";
  // Pending before the deferral: an exposed memory takes the contents at
  // once (SyncedMemory::Defer), and the pass must run for them.
  pending_ = std::move(pass);
  pass_input_ = input;
  Written(top);
}

void FoldedOutput::EndDeferral() {
  const std::shared_ptr<SyncedMemory> memory = deferring_.lock();
  if (memory && memory->DeferredTo(this)) memory->WriteDeferred();
  deferring_.reset();
}

dnnl::memory FoldedOutput::Input(const FoldedOutput* producer, Blob<float>* bottom,
                                 const dnnl::memory::desc& plain, const dnnl::memory& own,
                                 const dnnl::reorder& move, const FoldedOutput** read) {
  if (read) *read = nullptr;
  if (!own) return Wrap(plain, bottom->cpu_data());
  const dnnl::memory* blocks = producer ? producer->BlockedOutput(bottom) : nullptr;
  if (blocks && SameLayout(*blocks, own)) {
    if (read) *read = producer;
    return *blocks;
  }
  DnnlRun(move, {{DNNL_ARG_FROM, Wrap(plain, bottom->cpu_data())}, {DNNL_ARG_TO, own}});
  return own;
}

}  // namespace crema
