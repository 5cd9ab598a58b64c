#include "crema/dnnl/dnnl_lrn_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlLRNPrimitives {
  dnnl::memory::desc data;
  dnnl::lrn_forward forward;
  dnnl::lrn_backward backward;
  dnnl::memory workspace;  // what the forward pass keeps for the backward one
};

template <typename Dtype>
DnnlLRNLayer<Dtype>::DnnlLRNLayer(const LayerParameter& param)
    : DnnlTwin<Dtype, LRNLayer, DnnlLRNPrimitives>(param) {}

template <typename Dtype>
bool DnnlLRNLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>&, DnnlLRNPrimitives* p) {
  if (this->by_default_ && !DefaultLRNRunsDnnl(this->across_channels(), this->phase_)) {
    return this->LeaveToReference(
        "DEFAULT: oneDNN only across channels in a forward-only (TEST) net");
  }
  p->data = PlainDesc(bottom[0]->shape());
  // oneDNN divides alpha by the window's size as Caffe does; within a channel
  // Caffe adds 1, not k (the reference layer's offset_ holds which).
  const auto region = this->across_channels() ? dnnl::algorithm::lrn_across_channels
                                              : dnnl::algorithm::lrn_within_channel;
  const auto size = static_cast<dnnl::memory::dim>(this->local_size_);
  const float alpha = this->alpha_, beta = this->beta_, k = this->offset_;
  dnnl::lrn_forward::primitive_desc forward_pd(
      dnnl::lrn_forward::desc(dnnl::prop_kind::forward_training, region, p->data, size, alpha, beta,
                              k),
      DnnlEngine());
  p->forward = dnnl::lrn_forward(forward_pd);
  p->backward = dnnl::lrn_backward(dnnl::lrn_backward::primitive_desc(
      dnnl::lrn_backward::desc(region, p->data, p->data, size, alpha, beta, k), DnnlEngine(),
      forward_pd));
  p->workspace = dnnl::memory(forward_pd.workspace_desc(), DnnlEngine());
  return true;
}

template <typename Dtype>
void DnnlLRNLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return LRNLayer<Dtype>::Forward_cpu(bottom, top);
  const DnnlLRNPrimitives& p = *this->primitives_;
  DnnlRun(p.forward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                      {DNNL_ARG_DST, Wrap(p.data, top[0]->mutable_cpu_data())},
                      {DNNL_ARG_WORKSPACE, p.workspace}});
}

template <typename Dtype>
void DnnlLRNLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->primitives_) return LRNLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const DnnlLRNPrimitives& p = *this->primitives_;
  DnnlRun(p.backward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                       {DNNL_ARG_DIFF_DST, Wrap(p.data, top[0]->cpu_diff())},
                       {DNNL_ARG_WORKSPACE, p.workspace},
                       {DNNL_ARG_DIFF_SRC, Wrap(p.data, bottom[0]->mutable_cpu_diff())}});
}

template class DnnlTwin<float, LRNLayer, DnnlLRNPrimitives>;
template class DnnlLRNLayer<float>;
REGISTER_DNNL_BODY(LRN, DnnlLRNLayer<float>, true,
                   "oneDNN where its rule for the shape says (default_policy.hpp)");

}  // namespace crema
