#include "crema/dnnl/dnnl_folded_permute_layer.hpp"

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlFoldedPermutePrimitives {
  // The bottom's dims in Caffe's layout, in the producer's blocks, and in
  // channels-last order: the top's layout, read with the bottom's dims.
  dnnl::memory::desc plain, blocks, channels_last;
  dnnl::reorder from_blocks, from_plain;
};

DnnlFoldedPermute::DnnlFoldedPermute(const LayerParameter& param, const FoldedOutput* producer)
    : DnnlFoldedTwin<PermuteLayer, DnnlFoldedPermutePrimitives>(param), producer_(producer) {}

bool DnnlFoldedPermute::MakePrimitives(const std::vector<Blob<float>*>& bottom,
                                       const std::vector<Blob<float>*>& /*top*/,
                                       DnnlFoldedPermutePrimitives* p) {
  const dnnl::memory::desc* produced = producer_->BlockedOutputDesc();
  if (bottom[0]->num_axes() != 4 || FullOrder(4) != std::vector<int>{0, 2, 3, 1} || !produced) {
    return false;
  }
  p->plain = PlainDesc(bottom[0]->shape());
  if (produced->dims() != p->plain.dims()) return false;
  p->blocks = *produced;
  p->channels_last = dnnl::memory::desc(p->plain.dims(), dnnl::memory::data_type::f32,
                                        dnnl::memory::format_tag::nhwc);
  p->from_blocks = dnnl::reorder(
      dnnl::reorder::primitive_desc(DnnlEngine(), p->blocks, DnnlEngine(), p->channels_last));
  p->from_plain = dnnl::reorder(
      dnnl::reorder::primitive_desc(DnnlEngine(), p->plain, DnnlEngine(), p->channels_last));
  return true;
}

void DnnlFoldedPermute::Forward_cpu(const std::vector<Blob<float>*>& bottom,
                                    const std::vector<Blob<float>*>& top) {
  const DnnlFoldedPermutePrimitives& p = *primitives_;
  const dnnl::memory to = Wrap(p.channels_last, top[0]->mutable_cpu_data());
  const dnnl::memory* blocks = producer_->BlockedOutput(bottom[0]);
  if (blocks && blocks->get_desc() == p.blocks) {
    DnnlRun(p.from_blocks, {{DNNL_ARG_FROM, *blocks}, {DNNL_ARG_TO, to}});
  } else {
    DnnlRun(p.from_plain,
            {{DNNL_ARG_FROM, Wrap(p.plain, bottom[0]->cpu_data())}, {DNNL_ARG_TO, to}});
  }
}

template class DnnlTwin<float, PermuteLayer, DnnlFoldedPermutePrimitives>;

}  // namespace crema
