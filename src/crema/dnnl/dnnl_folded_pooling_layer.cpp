#include "crema/dnnl/dnnl_folded_pooling_layer.hpp"

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_pooling_layer.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlFoldedPoolingPrimitives {
  dnnl::pooling_forward forward;
  dnnl::memory::desc src_plain;
  dnnl::memory src;  // empty where the primitive reads Caffe's layout
  dnnl::reorder src_in;
};

DnnlFoldedPooling::DnnlFoldedPooling(const LayerParameter& param, const FoldedOutput* producer)
    : DnnlFoldedTwin<PoolingLayer, DnnlFoldedPoolingPrimitives>(param), producer_(producer) {}

// The input layout: the producer's blocks as they lie, else
// PreferredActivation; the output in the layout oneDNN gives that input.
bool DnnlFoldedPooling::MakePrimitives(const std::vector<Blob<float>*>& bottom,
                                       const std::vector<Blob<float>*>& top,
                                       DnnlFoldedPoolingPrimitives* p) {
  SetUpOutput(dnnl::memory::desc(), dnnl::memory::desc());  // none until made
  DnnlPoolingForm form;
  if (top.size() != 1 || bottom[0]->num_axes() != 4 ||
      !DnnlPoolingFormOf(layer_param_.pooling_param().pool(), geometry_, &form)) {
    return false;
  }
  p->src_plain = PlainDesc(bottom[0]->shape());
  const dnnl::memory::desc dst_plain = PlainDesc(top[0]->shape());
  const dnnl::memory::desc* produced = producer_->BlockedOutputDesc();
  const dnnl::memory::desc src = produced && produced->dims() == p->src_plain.dims()
                                     ? *produced
                                     : PreferredActivation(p->src_plain);
  const dnnl::memory::desc dst(dst_plain.dims(), dnnl::memory::data_type::f32,
                               dnnl::memory::format_tag::any);
  dnnl::pooling_forward::primitive_desc pd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_inference, form.algorithm, src, dst,
                                  form.strides, form.kernel, form.left, form.right),
      DnnlEngine());
  if (!OptimisedKernel(pd)) return false;
  p->forward = dnnl::pooling_forward(pd);
  if (pd.src_desc() != p->src_plain) {
    p->src = dnnl::memory(pd.src_desc(), DnnlEngine());
    p->src_in = dnnl::reorder(
        dnnl::reorder::primitive_desc(DnnlEngine(), p->src_plain, DnnlEngine(), pd.src_desc()));
  }
  SetUpOutput(pd.dst_desc(), dst_plain);
  return true;
}

void DnnlFoldedPooling::Forward_cpu(const std::vector<Blob<float>*>& bottom,
                                    const std::vector<Blob<float>*>& top) {
  const DnnlFoldedPoolingPrimitives& p = *primitives_;
  const dnnl::memory src = Input(producer_, bottom[0], p.src_plain, p.src, p.src_in);
  DnnlRun(p.forward, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, OutputFor(top[0])}});
  Written(top[0]);
}

template class DnnlTwin<float, PoolingLayer, DnnlFoldedPoolingPrimitives>;

}  // namespace crema
