#include "crema/dnnl/folded_arena.hpp"

#include <algorithm>

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/folded_output.hpp"

namespace crema {

FoldedArena::FoldedArena(int slots) : slots_(slots) {}

dnnl::memory FoldedArena::Memory(int slot, const dnnl::memory::desc& desc) {
  Slot& s = slots_[slot];
  const size_t bytes = desc.get_size();
  if (s.buffers.empty() || s.buffers.back().get_desc().get_size() < bytes) {
    // Bytes as floats, rounded up: oneDNN allocates and aligns the buffer.
    const dnnl::memory::dim floats = static_cast<dnnl::memory::dim>((bytes + 3) / 4);
    s.buffers.emplace_back(
        dnnl::memory::desc({floats}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x),
        DnnlEngine());
    s.holder = nullptr;
  }
  return dnnl::memory(desc, DnnlEngine(), s.buffers.back().get_data_handle());
}

void FoldedArena::Register(FoldedOutput* output, int layer) { outputs_.push_back({output, layer}); }

void FoldedArena::Unregister(const FoldedOutput* output) {
  outputs_.erase(std::remove_if(outputs_.begin(), outputs_.end(),
                                [output](const Registered& r) { return r.output == output; }),
                 outputs_.end());
}

void FoldedArena::WriteOutFrom(int layer) {
  // All first, then the forgetting: a pass left pending may read an output
  // forgotten here, and restores it.
  for (const Registered& r : outputs_) {
    if (r.layer > layer && (r.output->Pooled() || r.output->HasPending())) {
      r.output->WriteOut(false);
    }
  }
  for (const Registered& r : outputs_) {
    if (r.layer > layer && r.output->Pooled()) r.output->WriteOut(true);
  }
}

void FoldedArena::WriteOutAll() {
  for (const Registered& r : outputs_) r.output->WriteOut(false);
}

}  // namespace crema
