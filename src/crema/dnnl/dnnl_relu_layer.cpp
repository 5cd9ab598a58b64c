#include "crema/dnnl/dnnl_relu_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
struct DnnlReLULayer<Dtype>::Primitives {
  dnnl::memory::desc data;  // the blob as one flat array: ReLU ignores the shape
  dnnl::eltwise_forward forward;
  dnnl::eltwise_backward backward;
};

template <typename Dtype>
DnnlReLULayer<Dtype>::DnnlReLULayer(const LayerParameter& param, bool for_default)
    : ReLULayer<Dtype>(param), for_default_(for_default) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype>
DnnlReLULayer<Dtype>::~DnnlReLULayer() = default;

template <typename Dtype>
void DnnlReLULayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  ReLULayer<Dtype>::Reshape(bottom, top);
  const std::vector<int> flat{bottom[0]->count()};
  if (flat == primitive_shape_) return;
  primitive_shape_ = flat;
  MakePrimitives(*bottom[0]);
}

template <typename Dtype>
void DnnlReLULayer<Dtype>::MakePrimitives(const Blob<Dtype>& bottom) {
  primitives_.reset();
  if (bottom.count() == 0 || (for_default_ && !DefaultReLURunsDnnl(bottom.count()))) return;
  const float slope = this->layer_param_.relu_param().negative_slope();
  std::unique_ptr<Primitives> p(new Primitives());
  p->data = PlainDesc({bottom.count()});
  try {
    DnnlUseThreadBudget();
    const auto relu = dnnl::algorithm::eltwise_relu;
    dnnl::eltwise_forward::primitive_desc forward_pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, relu, p->data, slope, 0.f),
        DnnlEngine());
    p->forward = dnnl::eltwise_forward(forward_pd);
    p->backward = dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(
        dnnl::eltwise_backward::desc(relu, p->data, p->data, slope, 0.f), DnnlEngine(),
        forward_pd));
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name() << "': oneDNN has no ReLU here ("
                 << e.what() << "); the reference body runs";
    return;
  }
  primitives_ = std::move(p);
}

template <typename Dtype>
void DnnlReLULayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  if (!primitives_) return ReLULayer<Dtype>::Forward_cpu(bottom, top);
  const Primitives& p = *primitives_;
  DnnlRun(p.forward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                      {DNNL_ARG_DST, Wrap(p.data, top[0]->mutable_cpu_data())}});
}

template <typename Dtype>
void DnnlReLULayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  if (!primitives_) return ReLULayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const Primitives& p = *primitives_;
  DnnlRun(p.backward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                       {DNNL_ARG_DIFF_DST, Wrap(p.data, top[0]->cpu_diff())},
                       {DNNL_ARG_DIFF_SRC, Wrap(p.data, bottom[0]->mutable_cpu_diff())}});
}

template class DnnlReLULayer<float>;
REGISTER_DNNL_LAYER(ReLU);

}  // namespace crema
