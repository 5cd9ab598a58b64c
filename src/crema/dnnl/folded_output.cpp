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

FoldedOutput::~FoldedOutput() { EndDeferral(); }

const dnnl::memory* FoldedOutput::BlockedOutput(Blob<float>* top) const {
  if (!blocked_ || written_stamp_ == 0 || top->data()->stamp() != written_stamp_) return nullptr;
  RunPending();
  return &blocked_;
}

const FoldedOutput::Pass* FoldedOutput::PendingFor(Blob<float>* top) const {
  if (!pending_ || top->data()->stamp() != written_stamp_) return nullptr;
  return &*pending_;
}

void FoldedOutput::RunPending() const {
  if (!pending_) return;
  DnnlRun(pending_->primitive, pending_->arguments);
  pending_.reset();
}

const dnnl::memory::desc* FoldedOutput::BlockedOutputDesc() const {
  return blocked_ ? &blocked_desc_ : nullptr;
}

void FoldedOutput::WriteTo(void* host) {
  RunPending();
  DnnlRun(move_out_, {{DNNL_ARG_FROM, blocked_}, {DNNL_ARG_TO, Wrap(plain_, host)}});
}

void FoldedOutput::SetUpOutput(const dnnl::memory::desc& chosen, const dnnl::memory::desc& plain) {
  EndDeferral();
  pending_.reset();  // where no memory defers to it, no one reads its values
  written_stamp_ = 0;
  plain_ = plain;
  blocked_ = dnnl::memory();
  move_out_ = dnnl::reorder();
  if (chosen == plain) return;
  blocked_desc_ = chosen;
  blocked_ = dnnl::memory(chosen, DnnlEngine());
  move_out_ =
      dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), chosen, DnnlEngine(), plain));
}

dnnl::memory FoldedOutput::OutputFor(Blob<float>* top) {
  if (!blocked_) return Wrap(plain_, top->mutable_cpu_data());
  // The buffer is about to change: a memory that still defers to it and is
  // no longer the top's (the blob took new memory) is written first.
  if (deferring_.lock() != top->data()) EndDeferral();
  pending_.reset();  // the top's values are this pass's now
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

void FoldedOutput::WrittenLater(Blob<float>* top, Pass pass) {
  CHECK(blocked_) << "a pass left pending writes the blocked buffer";
  // Pending before the deferral: an exposed memory takes the contents at
  // once (SyncedMemory::Defer), and the pass must run for them.
  pending_ = std::move(pass);
  Written(top);
}

void FoldedOutput::EndDeferral() {
  const std::shared_ptr<SyncedMemory> memory = deferring_.lock();
  if (memory && memory->DeferredTo(this)) memory->WriteDeferred();
  deferring_.reset();
}

dnnl::memory FoldedOutput::Input(const FoldedOutput* producer, Blob<float>* bottom,
                                 const dnnl::memory::desc& plain, const dnnl::memory& own,
                                 const dnnl::reorder& move) {
  if (!own) return Wrap(plain, bottom->cpu_data());
  const dnnl::memory* blocks = producer ? producer->BlockedOutput(bottom) : nullptr;
  if (blocks && SameLayout(*blocks, own)) return *blocks;
  DnnlRun(move, {{DNNL_ARG_FROM, Wrap(plain, bottom->cpu_data())}, {DNNL_ARG_TO, own}});
  return own;
}

}  // namespace crema
