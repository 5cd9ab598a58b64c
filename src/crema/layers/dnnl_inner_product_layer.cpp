#include "crema/layers/dnnl_inner_product_layer.hpp"

#ifdef CREMA_DNNL

#include <type_traits>

#include "crema/util/dnnl.hpp"

namespace crema {

template <typename Dtype>
struct DnnlInnerProductLayer<Dtype>::Primitives {
  dnnl::memory::desc src, weights, bias, dst;
  dnnl::inner_product_forward forward;
  dnnl::inner_product_backward_data backward_data;
  dnnl::inner_product_backward_weights backward_weights;
};

template <typename Dtype>
DnnlInnerProductLayer<Dtype>::DnnlInnerProductLayer(const LayerParameter& param)
    : InnerProductLayer<Dtype>(param) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype>
DnnlInnerProductLayer<Dtype>::~DnnlInnerProductLayer() = default;

template <typename Dtype>
void DnnlInnerProductLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  InnerProductLayer<Dtype>::Reshape(bottom, top);
  if (bottom[0]->shape() == primitive_shape_) return;
  primitive_shape_ = bottom[0]->shape();
  MakePrimitives();
}

template <typename Dtype>
void DnnlInnerProductLayer<Dtype>::MakePrimitives() {
  primitives_.reset();
  const int rows = this->batch_size_, inputs = this->input_size_, outputs = this->num_output_;
  std::unique_ptr<Primitives> p(new Primitives());
  p->src = PlainDesc({rows, inputs});
  p->dst = PlainDesc({rows, outputs});
  // oneDNN's weights are [outputs, inputs]; transpose stores them [inputs, outputs].
  p->weights = this->transpose_ ? StridedDesc({outputs, inputs}, {1, outputs})
                                : PlainDesc({outputs, inputs});
  if (this->bias_term_) p->bias = PlainDesc({outputs});
  try {
    DnnlUseThreadBudget();
    dnnl::inner_product_forward::primitive_desc forward_pd(
        dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, p->src, p->weights,
                                          p->bias, p->dst),
        DnnlEngine());
    p->forward = dnnl::inner_product_forward(forward_pd);
    p->backward_data =
        dnnl::inner_product_backward_data(dnnl::inner_product_backward_data::primitive_desc(
            dnnl::inner_product_backward_data::desc(p->src, p->weights, p->dst), DnnlEngine(),
            forward_pd));
    p->backward_weights =
        dnnl::inner_product_backward_weights(dnnl::inner_product_backward_weights::primitive_desc(
            dnnl::inner_product_backward_weights::desc(p->src, p->weights, p->bias, p->dst),
            DnnlEngine(), forward_pd));
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name()
                 << "': oneDNN has no inner product for this shape (" << e.what()
                 << "); the reference body runs";
    return;
  }
  weight_diff_buffer_.ReshapeLike(*this->blobs_[0]);
  if (this->bias_term_) bias_diff_buffer_.ReshapeLike(*this->blobs_[1]);
  primitives_ = std::move(p);
}

template <typename Dtype>
void DnnlInnerProductLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                               const std::vector<Blob<Dtype>*>& top) {
  if (!primitives_) return InnerProductLayer<Dtype>::Forward_cpu(bottom, top);
  const Primitives& p = *primitives_;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, Wrap(p.src, bottom[0]->cpu_data())},
      {DNNL_ARG_WEIGHTS, Wrap(p.weights, this->blobs_[0]->cpu_data())},
      {DNNL_ARG_DST, Wrap(p.dst, top[0]->mutable_cpu_data())}};
  if (this->bias_term_) args[DNNL_ARG_BIAS] = Wrap(p.bias, this->blobs_[1]->cpu_data());
  DnnlRun(p.forward, args);
}

template <typename Dtype>
void DnnlInnerProductLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                const std::vector<bool>& propagate_down,
                                                const std::vector<Blob<Dtype>*>& bottom) {
  if (!primitives_) return InnerProductLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  const Primitives& p = *primitives_;
  const dnnl::memory top_diff = Wrap(p.dst, top[0]->cpu_diff());
  const bool weight_grad = this->param_propagate_down(0);
  const bool bias_grad = this->bias_term_ && this->param_propagate_down(1);
  if (weight_grad || bias_grad) {
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, Wrap(p.src, bottom[0]->cpu_data())},
        {DNNL_ARG_DIFF_DST, top_diff},
        {DNNL_ARG_DIFF_WEIGHTS, Wrap(p.weights, weight_diff_buffer_.mutable_cpu_data())}};
    if (this->bias_term_) {
      args[DNNL_ARG_DIFF_BIAS] = Wrap(p.bias, bias_diff_buffer_.mutable_cpu_data());
    }
    DnnlRun(p.backward_weights, args);
    if (weight_grad) AccumulateInto(weight_diff_buffer_, this->blobs_[0].get());
    if (bias_grad) AccumulateInto(bias_diff_buffer_, this->blobs_[1].get());
  }
  if (propagate_down[0]) {
    DnnlRun(p.backward_data, {{DNNL_ARG_DIFF_SRC, Wrap(p.src, bottom[0]->mutable_cpu_diff())},
                              {DNNL_ARG_WEIGHTS, Wrap(p.weights, this->blobs_[0]->cpu_data())},
                              {DNNL_ARG_DIFF_DST, top_diff}});
  }
}

template class DnnlInnerProductLayer<float>;

}  // namespace crema

#endif  // CREMA_DNNL
