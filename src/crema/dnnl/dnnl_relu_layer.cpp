#include "crema/dnnl/dnnl_relu_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlReLUPrimitives {
  dnnl::memory::desc data;  // the blob as one flat array: ReLU ignores the shape
  dnnl::eltwise_forward forward;
  dnnl::eltwise_backward backward;
};

template <typename Dtype>
DnnlReLULayer<Dtype>::DnnlReLULayer(const LayerParameter& param)
    : DnnlTwin<Dtype, ReLULayer, DnnlReLUPrimitives>(param) {}

// The blob as one flat array: ReLU ignores the shape.
template <typename Dtype>
std::vector<int> DnnlReLULayer<Dtype>::PrimitiveShape(
    const std::vector<Blob<Dtype>*>& bottom) const {
  return {bottom[0]->count()};
}

template <typename Dtype>
bool DnnlReLULayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>&, DnnlReLUPrimitives* p) {
  const int count = bottom[0]->count();
  if (count == 0) return this->LeaveToReference("an empty blob");
  if (this->by_default_ && !DefaultReLURunsDnnl(count)) {
    return this->LeaveToReference("DEFAULT: a blob too small for a oneDNN call to pay");
  }
  const float slope = this->layer_param_.relu_param().negative_slope();
  p->data = PlainDesc({count});
  const auto relu = dnnl::algorithm::eltwise_relu;
  dnnl::eltwise_forward::primitive_desc forward_pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, relu, p->data, slope, 0.f),
      DnnlEngine());
  p->forward = dnnl::eltwise_forward(forward_pd);
  p->backward = dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(
      dnnl::eltwise_backward::desc(relu, p->data, p->data, slope, 0.f), DnnlEngine(), forward_pd));
  return true;
}

template <typename Dtype>
void DnnlReLULayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return ReLULayer<Dtype>::Forward_cpu(bottom, top);
  const DnnlReLUPrimitives& p = *this->primitives_;
  DnnlRun(p.forward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                      {DNNL_ARG_DST, Wrap(p.data, top[0]->mutable_cpu_data())}});
}

template <typename Dtype>
void DnnlReLULayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->primitives_) return ReLULayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const DnnlReLUPrimitives& p = *this->primitives_;
  DnnlRun(p.backward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                       {DNNL_ARG_DIFF_DST, Wrap(p.data, top[0]->cpu_diff())},
                       {DNNL_ARG_DIFF_SRC, Wrap(p.data, bottom[0]->mutable_cpu_diff())}});
}

template class DnnlTwin<float, ReLULayer, DnnlReLUPrimitives>;
template class DnnlReLULayer<float>;
REGISTER_DNNL_BODY(ReLU, DnnlReLULayer<float>, true,
                   "oneDNN where its rule for the shape says (default_policy.hpp)");

}  // namespace crema
