#include "crema/dnnl/dnnl_folded_eltwise_layer.hpp"

#include <utility>

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlFoldedEltwisePrimitives {
  dnnl::binary forward;
  dnnl::memory::desc plain;  // each bottom's and the top's
  // Per bottom: a buffer in the primitive's layout and the move into it
  // (empty where the primitive reads Caffe's layout).
  dnnl::memory src[2];
  dnnl::reorder src_in[2];
  // The fused bottom's convolution with this layer's operation and
  // activation as post-ops (FuseConvolution), where made; the source it
  // reads, and the index of the post-op that reads the other bottom.
  dnnl::convolution_forward fused;
  dnnl::memory::desc fused_src;
  int other_post_op = 0;
};

DnnlFoldedEltwise::DnnlFoldedEltwise(const LayerParameter& param,
                                     std::vector<const FoldedOutput*> producers,
                                     const FoldedActivation& activation)
    : DnnlFoldedTwin<EltwiseLayer, DnnlFoldedEltwisePrimitives>(param),
      producers_(std::move(producers)),
      activation_(activation) {}

bool DnnlFoldedEltwise::Folds(const LayerParameter& param, int bottoms) {
  if (bottoms != 2) return false;
  const EltwiseParameter& eltwise = param.eltwise_param();
  if (eltwise.operation() != EltwiseParameter::SUM) return true;
  for (const float coeff : eltwise.coeff()) {
    if (coeff != 1.0f) return false;
  }
  return true;
}

namespace {

dnnl::algorithm BinaryOf(EltwiseParameter::EltwiseOp operation) {
  switch (operation) {
    case EltwiseParameter::PROD:
      return dnnl::algorithm::binary_mul;
    case EltwiseParameter::MAX:
      return dnnl::algorithm::binary_max;
    default:
      return dnnl::algorithm::binary_add;
  }
}

}  // namespace

// Both inputs and the output in one layout: the first producer's blocks as
// they lie, else PreferredActivation.
bool DnnlFoldedEltwise::MakePrimitives(const std::vector<Blob<float>*>& bottom,
                                       const std::vector<Blob<float>*>& top,
                                       DnnlFoldedEltwisePrimitives* p) {
  SetUpOutput(dnnl::memory::desc(), dnnl::memory::desc());     // none until made
  if (convolution_) convolution_->LeaveOutputToReader(false);  // until the fused one is made
  if (bottom.size() != 2 || bottom[0]->num_axes() != 4) return false;
  p->plain = PlainDesc(top[0]->shape());
  dnnl::memory::desc layout = PreferredActivation(p->plain);
  for (const FoldedOutput* producer : producers_) {
    const dnnl::memory::desc* produced = producer ? producer->BlockedOutputDesc() : nullptr;
    if (produced && produced->dims() == p->plain.dims()) {
      layout = *produced;
      break;
    }
  }
  if (layout.data.format_kind == dnnl_format_kind_any) return false;
  dnnl::primitive_attr attributes;
  attributes.set_post_ops(activation_.PostOps());
  dnnl::binary::primitive_desc pd(dnnl::binary::desc(BinaryOf(operation_), layout, layout, layout),
                                  attributes, DnnlEngine());
  if (!OptimisedKernel(pd)) return false;
  p->forward = dnnl::binary(pd);
  if (layout != p->plain) {
    for (int b = 0; b < 2; ++b) {
      p->src[b] = dnnl::memory(layout, DnnlEngine());
      p->src_in[b] = dnnl::reorder(
          dnnl::reorder::primitive_desc(DnnlEngine(), p->plain, DnnlEngine(), layout));
    }
  }
  SetUpOutput(pd.dst_desc(), p->plain);
  if (convolution_) convolution_->LeaveOutputToReader(MakeFused(layout, p));
  return true;
}

void DnnlFoldedEltwise::FuseConvolution(DnnlFoldedConvolution<ConvolutionLayer>* convolution,
                                        int bottom) {
  convolution_ = convolution;
  fused_bottom_ = bottom;
}

// The convolution, its activation, this layer's operation with the other
// bottom (in `layout`, as the binary primitive reads it), this layer's
// activation; writing the output in `layout`.
bool DnnlFoldedEltwise::MakeFused(const dnnl::memory::desc& layout,
                                  DnnlFoldedEltwisePrimitives* p) {
  if (!OutputBlocked()) return false;
  const std::optional<dnnl::convolution_forward::primitive_desc> pd =
      convolution_->FusedWith([&](dnnl::post_ops* ops) {
        p->other_post_op = ops->len();
        ops->append_binary(BinaryOf(operation_), layout);
        activation_.AppendTo(ops);
      });
  if (!pd || pd->dst_desc() != layout) return false;
  p->fused = dnnl::convolution_forward(*pd);
  p->fused_src = pd->src_desc();
  return true;
}

void DnnlFoldedEltwise::Forward_cpu(const std::vector<Blob<float>*>& bottom,
                                    const std::vector<Blob<float>*>& top) {
  const DnnlFoldedEltwisePrimitives& p = *primitives_;
  const dnnl::memory dst = OutputFor(top[0]);
  const FoldedOutput::Pass* pending =
      p.fused ? convolution_->PendingFor(bottom[fused_bottom_]) : nullptr;
  if (pending && pending->arguments.at(DNNL_ARG_SRC).get_desc() == p.fused_src) {
    const int other = 1 - fused_bottom_;
    DnnlRun(p.fused,
            {{DNNL_ARG_SRC, pending->arguments.at(DNNL_ARG_SRC)},
             {DNNL_ARG_WEIGHTS, pending->arguments.at(DNNL_ARG_WEIGHTS)},
             {DNNL_ARG_BIAS, pending->arguments.at(DNNL_ARG_BIAS)},
             {DNNL_ARG_ATTR_MULTIPLE_POST_OP(p.other_post_op) | DNNL_ARG_SRC_1,
              Input(producers_[other], bottom[other], p.plain, p.src[other], p.src_in[other])},
             {DNNL_ARG_DST, dst}});
    Written(top[0]);
    return;
  }
  const dnnl::memory first = Input(producers_[0], bottom[0], p.plain, p.src[0], p.src_in[0]);
  const dnnl::memory second = Input(producers_[1], bottom[1], p.plain, p.src[1], p.src_in[1]);
  DnnlRun(p.forward, {{DNNL_ARG_SRC_0, first}, {DNNL_ARG_SRC_1, second}, {DNNL_ARG_DST, dst}});
  Written(top[0]);
}

template class DnnlTwin<float, EltwiseLayer, DnnlFoldedEltwisePrimitives>;

}  // namespace crema
