#include "crema/dnnl/dnnl_eltwise_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlEltwisePrimitives {
  dnnl::memory::desc data;  // every blob as one flat array
  dnnl::sum forward;
  // Bottom i's gradient: coefficient i times the top's (an eltwise_linear).
  std::vector<dnnl::eltwise_forward> backward;
};

template <typename Dtype>
DnnlEltwiseLayer<Dtype>::DnnlEltwiseLayer(const LayerParameter& param)
    : DnnlTwin<Dtype, EltwiseLayer, DnnlEltwisePrimitives>(param) {}

template <typename Dtype>
std::vector<int> DnnlEltwiseLayer<Dtype>::PrimitiveShape(
    const std::vector<Blob<Dtype>*>& bottom) const {
  return {bottom[0]->count(), static_cast<int>(bottom.size())};
}

template <typename Dtype>
bool DnnlEltwiseLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>&,
                                             DnnlEltwisePrimitives* p) {
  if (this->operation_ != EltwiseParameter::SUM || bottom[0]->count() == 0) return false;
  p->data = PlainDesc({bottom[0]->count()});
  const std::vector<float> scales(this->coeffs_.begin(), this->coeffs_.end());
  p->forward = dnnl::sum(dnnl::sum::primitive_desc(
      p->data, scales, std::vector<dnnl::memory::desc>(bottom.size(), p->data), DnnlEngine()));
  for (float scale : scales) {
    p->backward.emplace_back(dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::eltwise_linear, p->data, scale, 0.f),
        DnnlEngine()));
  }
  return true;
}

template <typename Dtype>
void DnnlEltwiseLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return EltwiseLayer<Dtype>::Forward_cpu(bottom, top);
  const DnnlEltwisePrimitives& p = *this->primitives_;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_DST, Wrap(p.data, top[0]->mutable_cpu_data())}};
  for (size_t i = 0; i < bottom.size(); ++i) {
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = Wrap(p.data, bottom[i]->cpu_data());
  }
  DnnlRun(p.forward, args);
}

template <typename Dtype>
void DnnlEltwiseLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->primitives_) return EltwiseLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  const DnnlEltwisePrimitives& p = *this->primitives_;
  const dnnl::memory top_diff = Wrap(p.data, top[0]->cpu_diff());
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate_down[i]) continue;
    DnnlRun(p.backward[i], {{DNNL_ARG_SRC, top_diff},
                            {DNNL_ARG_DST, Wrap(p.data, bottom[i]->mutable_cpu_diff())}});
  }
}

template class DnnlTwin<float, EltwiseLayer, DnnlEltwisePrimitives>;
template class DnnlEltwiseLayer<float>;
REGISTER_DNNL_BODY(Eltwise, DnnlEltwiseLayer<float>, false,
                   "the reference body's one-pass SUM is faster than oneDNN's (ResNet-50)");

}  // namespace crema
