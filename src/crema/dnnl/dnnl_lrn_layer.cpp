#include "crema/dnnl/dnnl_lrn_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
struct DnnlLRNLayer<Dtype>::Primitives {
  dnnl::memory::desc data;
  dnnl::lrn_forward forward;
  dnnl::lrn_backward backward;
  dnnl::memory workspace;  // what the forward pass keeps for the backward one
};

template <typename Dtype>
DnnlLRNLayer<Dtype>::DnnlLRNLayer(const LayerParameter& param, bool for_default)
    : LRNLayer<Dtype>(param), for_default_(for_default) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype>
DnnlLRNLayer<Dtype>::~DnnlLRNLayer() = default;

template <typename Dtype>
void DnnlLRNLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  LRNLayer<Dtype>::Reshape(bottom, top);
  if (bottom[0]->shape() == primitive_shape_) return;
  primitive_shape_ = bottom[0]->shape();
  MakePrimitives(*bottom[0]);
}

template <typename Dtype>
void DnnlLRNLayer<Dtype>::MakePrimitives(const Blob<Dtype>& bottom) {
  primitives_.reset();
  if (for_default_ && !DefaultLRNRunsDnnl(this->across_channels(), this->phase_)) return;
  std::unique_ptr<Primitives> p(new Primitives());
  p->data = PlainDesc(bottom.shape());
  // oneDNN divides alpha by the window's size as Caffe does; within a channel
  // Caffe adds 1, not k (the reference layer's offset_ holds which).
  const auto region = this->across_channels() ? dnnl::algorithm::lrn_across_channels
                                              : dnnl::algorithm::lrn_within_channel;
  const auto size = static_cast<dnnl::memory::dim>(this->local_size_);
  const float alpha = this->alpha_, beta = this->beta_, k = this->offset_;
  try {
    DnnlUseThreadBudget();
    dnnl::lrn_forward::primitive_desc forward_pd(
        dnnl::lrn_forward::desc(dnnl::prop_kind::forward_training, region, p->data, size, alpha,
                                beta, k),
        DnnlEngine());
    p->forward = dnnl::lrn_forward(forward_pd);
    p->backward = dnnl::lrn_backward(dnnl::lrn_backward::primitive_desc(
        dnnl::lrn_backward::desc(region, p->data, p->data, size, alpha, beta, k), DnnlEngine(),
        forward_pd));
    p->workspace = dnnl::memory(forward_pd.workspace_desc(), DnnlEngine());
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name() << "': oneDNN has no LRN here ("
                 << e.what() << "); the reference body runs";
    return;
  }
  primitives_ = std::move(p);
}

template <typename Dtype>
void DnnlLRNLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  if (!primitives_) return LRNLayer<Dtype>::Forward_cpu(bottom, top);
  const Primitives& p = *primitives_;
  DnnlRun(p.forward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                      {DNNL_ARG_DST, Wrap(p.data, top[0]->mutable_cpu_data())},
                      {DNNL_ARG_WORKSPACE, p.workspace}});
}

template <typename Dtype>
void DnnlLRNLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!primitives_) return LRNLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const Primitives& p = *primitives_;
  DnnlRun(p.backward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                       {DNNL_ARG_DIFF_DST, Wrap(p.data, top[0]->cpu_diff())},
                       {DNNL_ARG_WORKSPACE, p.workspace},
                       {DNNL_ARG_DIFF_SRC, Wrap(p.data, bottom[0]->mutable_cpu_diff())}});
}

template class DnnlLRNLayer<float>;
REGISTER_DNNL_LAYER(LRN);

}  // namespace crema
