#include "crema/dnnl/dnnl_softmax_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
struct DnnlSoftmaxLayer<Dtype>::Primitives {
  dnnl::memory::desc data;  // [outer, channels, inner], normalised along axis 1
  dnnl::softmax_forward forward;
  dnnl::softmax_backward backward;
};

template <typename Dtype>
DnnlSoftmaxLayer<Dtype>::DnnlSoftmaxLayer(const LayerParameter& param, bool)
    : SoftmaxLayer<Dtype>(param) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype>
DnnlSoftmaxLayer<Dtype>::~DnnlSoftmaxLayer() = default;

template <typename Dtype>
void DnnlSoftmaxLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  SoftmaxLayer<Dtype>::Reshape(bottom, top);
  const std::vector<int> shape{this->outer_num_, this->channels_, this->inner_num_};
  if (shape == primitive_shape_) return;
  primitive_shape_ = shape;
  MakePrimitives(*bottom[0]);
}

template <typename Dtype>
void DnnlSoftmaxLayer<Dtype>::MakePrimitives(const Blob<Dtype>& bottom) {
  primitives_.reset();
  if (bottom.count() == 0) return;
  std::unique_ptr<Primitives> p(new Primitives());
  p->data = PlainDesc(primitive_shape_);
  try {
    DnnlUseThreadBudget();
    dnnl::softmax_forward::primitive_desc forward_pd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, p->data, 1), DnnlEngine());
    p->forward = dnnl::softmax_forward(forward_pd);
    p->backward = dnnl::softmax_backward(dnnl::softmax_backward::primitive_desc(
        dnnl::softmax_backward::desc(p->data, p->data, 1), DnnlEngine(), forward_pd));
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name() << "': oneDNN has no softmax here ("
                 << e.what() << "); the reference body runs";
    return;
  }
  primitives_ = std::move(p);
}

template <typename Dtype>
void DnnlSoftmaxLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  if (!primitives_) return SoftmaxLayer<Dtype>::Forward_cpu(bottom, top);
  const Primitives& p = *primitives_;
  DnnlRun(p.forward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                      {DNNL_ARG_DST, Wrap(p.data, top[0]->mutable_cpu_data())}});
}

template <typename Dtype>
void DnnlSoftmaxLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom) {
  if (!primitives_) return SoftmaxLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const Primitives& p = *primitives_;
  DnnlRun(p.backward, {{DNNL_ARG_DST, Wrap(p.data, top[0]->cpu_data())},
                       {DNNL_ARG_DIFF_DST, Wrap(p.data, top[0]->cpu_diff())},
                       {DNNL_ARG_DIFF_SRC, Wrap(p.data, bottom[0]->mutable_cpu_diff())}});
}

template class DnnlSoftmaxLayer<float>;
REGISTER_DNNL_LAYER(Softmax);

}  // namespace crema
