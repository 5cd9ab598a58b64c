#include "crema/dnnl/dnnl_softmax_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlSoftmaxPrimitives {
  dnnl::memory::desc data;  // [outer, channels, inner], normalised along axis 1
  dnnl::softmax_forward forward;
  dnnl::softmax_backward backward;
};

template <typename Dtype>
DnnlSoftmaxLayer<Dtype>::DnnlSoftmaxLayer(const LayerParameter& param)
    : DnnlTwin<Dtype, SoftmaxLayer, DnnlSoftmaxPrimitives>(param) {}

template <typename Dtype>
std::vector<int> DnnlSoftmaxLayer<Dtype>::PrimitiveShape(const std::vector<Blob<Dtype>*>&) const {
  return {this->outer_num_, this->channels_, this->inner_num_};
}

// [outer, channels, inner], normalised along axis 1.
template <typename Dtype>
bool DnnlSoftmaxLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>&,
                                             DnnlSoftmaxPrimitives* p) {
  if (bottom[0]->count() == 0) return false;
  p->data = PlainDesc(PrimitiveShape(bottom));
  dnnl::softmax_forward::primitive_desc forward_pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, p->data, 1), DnnlEngine());
  p->forward = dnnl::softmax_forward(forward_pd);
  p->backward = dnnl::softmax_backward(dnnl::softmax_backward::primitive_desc(
      dnnl::softmax_backward::desc(p->data, p->data, 1), DnnlEngine(), forward_pd));
  return true;
}

template <typename Dtype>
void DnnlSoftmaxLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return SoftmaxLayer<Dtype>::Forward_cpu(bottom, top);
  const DnnlSoftmaxPrimitives& p = *this->primitives_;
  DnnlRun(p.forward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                      {DNNL_ARG_DST, Wrap(p.data, top[0]->mutable_cpu_data())}});
}

template <typename Dtype>
void DnnlSoftmaxLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->primitives_) return SoftmaxLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const DnnlSoftmaxPrimitives& p = *this->primitives_;
  DnnlRun(p.backward, {{DNNL_ARG_DST, Wrap(p.data, top[0]->cpu_data())},
                       {DNNL_ARG_DIFF_DST, Wrap(p.data, top[0]->cpu_diff())},
                       {DNNL_ARG_DIFF_SRC, Wrap(p.data, bottom[0]->mutable_cpu_diff())}});
}

template class DnnlTwin<float, SoftmaxLayer, DnnlSoftmaxPrimitives>;
template class DnnlSoftmaxLayer<float>;
REGISTER_DNNL_BODY(Softmax, DnnlSoftmaxLayer<float>, true,
                   "oneDNN, measured faster on every shape");

}  // namespace crema
