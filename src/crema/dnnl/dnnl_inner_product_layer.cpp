#include "crema/dnnl/dnnl_inner_product_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlInnerProductPrimitives {
  dnnl::memory::desc src, weights, bias, dst;  // the blobs' (plain) layouts
  dnnl::inner_product_forward forward;
  dnnl::inner_product_backward_data backward_data;
  dnnl::inner_product_backward_weights backward_weights;
  DnnlTrainingArguments args;  // in the layouts (and types) each primitive takes
};

template <typename Dtype>
DnnlInnerProductLayer<Dtype>::DnnlInnerProductLayer(const LayerParameter& param)
    : DnnlTwin<Dtype, InnerProductLayer, DnnlInnerProductPrimitives>(param) {}

template <typename Dtype>
bool DnnlInnerProductLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>&,
                                                  const std::vector<Blob<Dtype>*>&,
                                                  DnnlInnerProductPrimitives* p) {
  const int rows = this->batch_size_, inputs = this->input_size_, outputs = this->num_output_;
  p->src = PlainDesc({rows, inputs});
  p->dst = PlainDesc({rows, outputs});
  // oneDNN's weights are [outputs, inputs]; transpose stores them [inputs, outputs].
  p->weights = this->transpose_ ? StridedDesc({outputs, inputs}, {1, outputs})
                                : PlainDesc({outputs, inputs});
  if (this->bias_term_) p->bias = PlainDesc({outputs});
  const bool bf16 = bf16_ = DnnlUsesBf16(this->layer_param_, &warned_no_bf16_);
  if (this->by_default_ && !DefaultInnerProductRunsDnnl(bf16, rows)) {
    return this->LeaveToReference(bf16
                                      ? "DEFAULT: bf16 on fewer rows than pay for the conversions"
                                      : "DEFAULT: float, where oneDNN's weight gradient is slower");
  }
  // In float the primitives take the blobs as they lie. In bf16 the operands
  // (bottom, weights, top gradient) convert to bfloat16 in layouts oneDNN
  // chooses, as they are reordered; the results (top, bottom gradient, weight
  // gradient) and the bias stay float.
  using Type = dnnl::memory::data_type;
  const auto operand = [bf16](const dnnl::memory::desc& plain) {
    return bf16 ? dnnl::memory::desc(plain.dims(), Type::bf16, dnnl::memory::format_tag::any)
                : plain;
  };
  const auto result = [bf16](const dnnl::memory::desc& plain) {
    return bf16 ? dnnl::memory::desc(plain.dims(), Type::f32, dnnl::memory::format_tag::any)
                : plain;
  };
  const dnnl::memory::desc src = operand(p->src), weights = operand(p->weights),
                           diff_dst = operand(p->dst), dst = result(p->dst),
                           diff_src = result(p->src), diff_weights = result(p->weights);
  dnnl::inner_product_forward::primitive_desc forward_pd(
      dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, src, weights, p->bias,
                                        dst),
      DnnlEngine());
  dnnl::inner_product_backward_data::primitive_desc data_pd(
      dnnl::inner_product_backward_data::desc(diff_src, weights, diff_dst), DnnlEngine(),
      forward_pd);
  dnnl::inner_product_backward_weights::primitive_desc weights_pd(
      dnnl::inner_product_backward_weights::desc(src, diff_weights, p->bias, diff_dst),
      DnnlEngine(), forward_pd);
  p->forward = dnnl::inner_product_forward(forward_pd);
  p->backward_data = dnnl::inner_product_backward_data(data_pd);
  p->backward_weights = dnnl::inner_product_backward_weights(weights_pd);
  p->args = DnnlTrainingArguments(p->src, p->weights, p->dst, forward_pd, data_pd, weights_pd);
  return true;
}

template <typename Dtype>
void DnnlInnerProductLayer<Dtype>::PrimitivesMade() {
  weight_diff_buffer_.ReshapeLike(*this->blobs_[0]);
  if (this->bias_term_) bias_diff_buffer_.ReshapeLike(*this->blobs_[1]);
}

template <typename Dtype>
void DnnlInnerProductLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                               const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return InnerProductLayer<Dtype>::Forward_cpu(bottom, top);
  const DnnlInnerProductPrimitives& p = *this->primitives_;
  Dtype* top_data = top[0]->mutable_cpu_data();
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, p.args.forward_src.In(bottom[0]->cpu_data())},
      {DNNL_ARG_WEIGHTS, p.args.forward_weights.In(this->blobs_[0]->cpu_data())},
      {DNNL_ARG_DST, p.args.forward_dst.Out(top_data)}};
  if (this->bias_term_) args[DNNL_ARG_BIAS] = Wrap(p.bias, this->blobs_[1]->cpu_data());
  DnnlRun(p.forward, args);
  p.args.forward_dst.Finish(top_data);
}

template <typename Dtype>
void DnnlInnerProductLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                const std::vector<bool>& propagate_down,
                                                const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->primitives_)
    return InnerProductLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  const DnnlInnerProductPrimitives& p = *this->primitives_;
  const Dtype* top_diff = top[0]->cpu_diff();
  const bool weight_grad = this->param_propagate_down(0);
  const bool bias_grad = this->bias_term_ && this->param_propagate_down(1);
  // As in the convolution: the forward pass's converted bottom serves the
  // weight gradient, and one converted top gradient both primitives, where
  // their layouts agree.
  const bool reuse_src = p.args.weights_src.SameLayout(p.args.forward_src);
  const bool share_diff_dst = p.args.data_diff_dst.SameLayout(p.args.weights_diff_dst);
  dnnl::memory diff_dst;
  if (weight_grad || bias_grad) {
    const Dtype* bottom_data = bottom[0]->cpu_data();
    Dtype* weight_diff = weight_diff_buffer_.mutable_cpu_data();
    diff_dst = p.args.weights_diff_dst.In(top_diff);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC,
         reuse_src ? p.args.forward_src.Again(bottom_data) : p.args.weights_src.In(bottom_data)},
        {DNNL_ARG_DIFF_DST, diff_dst},
        {DNNL_ARG_DIFF_WEIGHTS, p.args.weights_diff_weights.Out(weight_diff)}};
    if (this->bias_term_) {
      args[DNNL_ARG_DIFF_BIAS] = Wrap(p.bias, bias_diff_buffer_.mutable_cpu_data());
    }
    DnnlRun(p.backward_weights, args);
    p.args.weights_diff_weights.Finish(weight_diff);
    if (weight_grad) AccumulateInto(weight_diff_buffer_, this->blobs_[0].get());
    if (bias_grad) AccumulateInto(bias_diff_buffer_, this->blobs_[1].get());
  }
  if (propagate_down[0]) {
    if (!diff_dst || !share_diff_dst) diff_dst = p.args.data_diff_dst.In(top_diff);
    Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
    DnnlRun(p.backward_data,
            {{DNNL_ARG_DIFF_SRC, p.args.data_diff_src.Out(bottom_diff)},
             {DNNL_ARG_WEIGHTS, p.args.data_weights.In(this->blobs_[0]->cpu_data())},
             {DNNL_ARG_DIFF_DST, diff_dst}});
    p.args.data_diff_src.Finish(bottom_diff);
  }
}

template class DnnlTwin<float, InnerProductLayer, DnnlInnerProductPrimitives>;
template class DnnlInnerProductLayer<float>;
REGISTER_DNNL_BODY(InnerProduct, DnnlInnerProductLayer<float>, true,
                   "oneDNN where its rule for the shape says (default_policy.hpp)");

}  // namespace crema
