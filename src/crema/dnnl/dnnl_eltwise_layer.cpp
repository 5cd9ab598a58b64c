#include "crema/dnnl/dnnl_eltwise_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
struct DnnlEltwiseLayer<Dtype>::Primitives {
  dnnl::memory::desc data;  // every blob as one flat array
  dnnl::sum forward;
  // Bottom i's gradient: coefficient i times the top's (an eltwise_linear).
  std::vector<dnnl::eltwise_forward> backward;
};

template <typename Dtype>
DnnlEltwiseLayer<Dtype>::DnnlEltwiseLayer(const LayerParameter& param, bool)
    : EltwiseLayer<Dtype>(param) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype>
DnnlEltwiseLayer<Dtype>::~DnnlEltwiseLayer() = default;

template <typename Dtype>
void DnnlEltwiseLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  EltwiseLayer<Dtype>::Reshape(bottom, top);
  const std::vector<int> flat{bottom[0]->count(), static_cast<int>(bottom.size())};
  if (flat == primitive_shape_) return;
  primitive_shape_ = flat;
  MakePrimitives(bottom);
}

template <typename Dtype>
void DnnlEltwiseLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom) {
  primitives_.reset();
  if (this->operation_ != EltwiseParameter::SUM || bottom[0]->count() == 0) return;
  std::unique_ptr<Primitives> p(new Primitives());
  p->data = PlainDesc({bottom[0]->count()});
  const std::vector<float> scales(this->coeffs_.begin(), this->coeffs_.end());
  try {
    DnnlUseThreadBudget();
    p->forward = dnnl::sum(dnnl::sum::primitive_desc(
        p->data, scales, std::vector<dnnl::memory::desc>(bottom.size(), p->data), DnnlEngine()));
    for (float scale : scales) {
      p->backward.emplace_back(dnnl::eltwise_forward::primitive_desc(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::eltwise_linear, p->data, scale, 0.f),
          DnnlEngine()));
    }
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name() << "': oneDNN has no sum here ("
                 << e.what() << "); the reference body runs";
    return;
  }
  primitives_ = std::move(p);
}

template <typename Dtype>
void DnnlEltwiseLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  if (!primitives_) return EltwiseLayer<Dtype>::Forward_cpu(bottom, top);
  const Primitives& p = *primitives_;
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
  if (!primitives_) return EltwiseLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  const Primitives& p = *primitives_;
  const dnnl::memory top_diff = Wrap(p.data, top[0]->cpu_diff());
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate_down[i]) continue;
    DnnlRun(p.backward[i], {{DNNL_ARG_SRC, top_diff},
                            {DNNL_ARG_DST, Wrap(p.data, bottom[i]->mutable_cpu_diff())}});
  }
}

template class DnnlEltwiseLayer<float>;
REGISTER_DNNL_LAYER(Eltwise);

}  // namespace crema
