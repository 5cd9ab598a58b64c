#include "crema/dnnl/dnnl_conv_layer.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlConvolutionPrimitives {
  dnnl::memory::desc src, weights, bias, dst;  // the blobs' (plain) layouts
  dnnl::convolution_forward forward;
  dnnl::convolution_backward_data backward_data;
  dnnl::convolution_backward_weights backward_weights;
  DnnlTrainingArguments args;  // in the layouts (and types) each primitive takes
};

template <typename Dtype, template <typename> class Reference>
DnnlConvolutionTwin<Dtype, Reference>::DnnlConvolutionTwin(const LayerParameter& param)
    : DnnlTwin<Dtype, Reference, DnnlConvolutionPrimitives>(param) {}

template <typename Dtype, template <typename> class Reference>
bool DnnlConvolutionTwin<Dtype, Reference>::Winograd() const {
  return this->layer_param_.convolution_algorithm() == WINOGRAD && this->num_spatial_axes_ == 2 &&
         this->kernel_shape_[0] == 3 && this->kernel_shape_[1] == 3 && this->stride_[0] == 1 &&
         this->stride_[1] == 1 && this->dilation_[0] == 1 && this->dilation_[1] == 1 &&
         this->group_ == 1 && !bf16_;
}

template <typename Dtype, template <typename> class Reference>
bool DnnlConvolutionTwin<Dtype, Reference>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                                                           const std::vector<Blob<Dtype>*>& top,
                                                           DnnlConvolutionPrimitives* p) {
  blocked_output_.Take();  // blocks of the old shape, in a buffer about to go
  winograd_ = false;
  reference_for_bottom_gradient_ = false;
  if (this->num_spatial_axes_ != 2 || this->channel_axis_ != 1 || bottom[0]->num_axes() != 4) {
    return false;
  }
  const bool bf16 = bf16_ = DnnlUsesBf16(this->layer_param_, &warned_no_bf16_);
  DescribePlain(*bottom[0], *top[0], p);
  // Winograd was asked for: oneDNN's, whatever engine DEFAULT would choose.
  if (Winograd()) {
    try {
      MakeTrainingPrimitives(true, p);
      winograd_ = true;
      return true;
    } catch (const dnnl::error& e) {
      LOG_IF(WARNING, !warned_no_winograd_)
          << "layer '" << this->layer_param_.name()
          << "': convolution_algorithm WINOGRAD: oneDNN has no Winograd convolution for this "
             "shape on this CPU ("
          << e.what() << "); the layer multiplies directly";
      warned_no_winograd_ = true;
    }
  }
  if (this->by_default_) {
    const int group = this->group_;
    const DefaultConvolutionBody body = DefaultConvolution(
        group, this->channels_ / group, this->num_output_ / group, this->is_1x1_, bf16);
    if (body == DefaultConvolutionBody::kReference) {
      return this->LeaveToReference(
          "DEFAULT: a pointwise kernel, or channels mostly padding in oneDNN's blocks");
    }
    reference_for_bottom_gradient_ = body == DefaultConvolutionBody::kDnnlButBottomGradient;
  }
  MakeTrainingPrimitives(false, p);
  return true;
}

// The three primitives in layouts left to oneDNN; in bf16 the operands
// (bottom, weights, top gradient) convert to bfloat16 as they are reordered,
// while the results (top, bottom gradient, weight gradient) and the bias stay
// float. Throws dnnl::error where oneDNN has none.
template <typename Dtype, template <typename> class Reference>
void DnnlConvolutionTwin<Dtype, Reference>::MakeTrainingPrimitives(
    bool winograd, DnnlConvolutionPrimitives* p) const {
  const ConvolutionWindows w =
      WindowsOf(this->kernel_shape_, this->stride_, this->pad_, this->dilation_,
                this->input_spatial_shape_, this->output_spatial_shape_);
  const auto algorithm =
      winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
  using Type = dnnl::memory::data_type;
  const auto chosen = [](const dnnl::memory::desc& plain, Type type) {
    return dnnl::memory::desc(plain.dims(), type, dnnl::memory::format_tag::any);
  };
  const Type operand = bf16_ ? Type::bf16 : Type::f32;
  const dnnl::memory::desc src = chosen(p->src, operand), weights = chosen(p->weights, operand),
                           dst = chosen(p->dst, Type::f32), diff_dst = chosen(p->dst, operand),
                           diff_src = chosen(p->src, Type::f32),
                           diff_weights = chosen(p->weights, Type::f32);
  dnnl::convolution_forward::primitive_desc forward_pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algorithm, src, weights,
                                      p->bias, dst, w.strides, w.dilates, w.pad_left, w.pad_right),
      DnnlEngine());
  dnnl::convolution_backward_data::primitive_desc data_pd(
      dnnl::convolution_backward_data::desc(algorithm, diff_src, weights, diff_dst, w.strides,
                                            w.dilates, w.pad_left, w.pad_right),
      DnnlEngine(), forward_pd);
  dnnl::convolution_backward_weights::primitive_desc weights_pd(
      dnnl::convolution_backward_weights::desc(algorithm, src, diff_weights, p->bias, diff_dst,
                                               w.strides, w.dilates, w.pad_left, w.pad_right),
      DnnlEngine(), forward_pd);
  p->forward = dnnl::convolution_forward(forward_pd);
  p->backward_data = dnnl::convolution_backward_data(data_pd);
  p->backward_weights = dnnl::convolution_backward_weights(weights_pd);
  p->args = DnnlTrainingArguments(p->src, p->weights, p->dst, forward_pd, data_pd, weights_pd);
}

template <typename Dtype, template <typename> class Reference>
void DnnlConvolutionTwin<Dtype, Reference>::DescribePlain(const Blob<Dtype>& bottom,
                                                          const Blob<Dtype>& top,
                                                          DnnlConvolutionPrimitives* p) const {
  p->src = PlainDesc(bottom.shape());
  p->dst = PlainDesc(top.shape());
  const int group = this->group_;
  const int out = this->num_output_, in = this->channels_;
  const int kh = this->kernel_shape_[0], kw = this->kernel_shape_[1];
  p->weights = group == 1 ? PlainDesc({out, in, kh, kw})
                          : PlainDesc({group, out / group, in / group, kh, kw});
  if (this->bias_term_) p->bias = PlainDesc({out});
}

template <typename Dtype, template <typename> class Reference>
void DnnlConvolutionTwin<Dtype, Reference>::PrimitivesMade() {
  weight_diff_buffer_.ReshapeLike(*this->blobs_[0]);
  if (this->bias_term_) bias_diff_buffer_.ReshapeLike(*this->blobs_[1]);
}

template <typename Dtype, template <typename> class Reference>
void DnnlConvolutionTwin<Dtype, Reference>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                        const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return Reference<Dtype>::Forward_cpu(bottom, top);
  const DnnlConvolutionPrimitives& p = *this->primitives_;
  for (size_t i = 0; i < bottom.size(); ++i) {
    Dtype* top_data = top[i]->mutable_cpu_data();
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, p.args.forward_src.In(bottom[i]->cpu_data())},
        {DNNL_ARG_WEIGHTS, p.args.forward_weights.In(this->blobs_[0]->cpu_data())},
        {DNNL_ARG_DST, p.args.forward_dst.Out(top_data)}};
    if (this->bias_term_) args[DNNL_ARG_BIAS] = Wrap(p.bias, this->blobs_[1]->cpu_data());
    DnnlRun(p.forward, args);
    if (hand_over_output_ && bottom.size() == 1 && p.args.forward_dst.MovesChannelBlocksOut()) {
      blocked_output_.Hand(static_cast<const float*>(p.args.forward_dst.Written()));
    } else {
      p.args.forward_dst.Finish(top_data);
    }
  }
}

template <typename Dtype, template <typename> class Reference>
void DnnlConvolutionTwin<Dtype, Reference>::FinishHandedOutput(Blob<Dtype>* top) {
  if (blocked_output_.Take()) this->primitives_->args.forward_dst.Finish(top->mutable_cpu_data());
}

template <typename Dtype, template <typename> class Reference>
void DnnlConvolutionTwin<Dtype, Reference>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                         const std::vector<bool>& propagate_down,
                                                         const std::vector<Blob<Dtype>*>& bottom) {
  const bool bottom_gradient =
      std::find(propagate_down.begin(), propagate_down.end(), true) != propagate_down.end();
  if (!this->primitives_ || (reference_for_bottom_gradient_ && bottom_gradient)) {
    return Reference<Dtype>::Backward_cpu(top, propagate_down, bottom);
  }
  const DnnlConvolutionPrimitives& p = *this->primitives_;
  const bool weight_grad = this->param_propagate_down(0);
  const bool bias_grad = this->bias_term_ && this->param_propagate_down(1);
  // Reorders cost memory traffic: the forward pass's reordered bottom serves
  // the weight gradient (one bottom: it is still the one reordered), and one
  // reordered top gradient serves both primitives where their layouts agree.
  const bool reuse_src = bottom.size() == 1 && p.args.weights_src.SameLayout(p.args.forward_src);
  const bool share_diff_dst = p.args.data_diff_dst.SameLayout(p.args.weights_diff_dst);
  for (size_t i = 0; i < top.size(); ++i) {
    const Dtype* top_diff = top[i]->cpu_diff();
    dnnl::memory diff_dst;
    if (weight_grad || bias_grad) {
      const Dtype* bottom_data = bottom[i]->cpu_data();
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
      if (weight_grad) {
        p.args.weights_diff_weights.FinishAdding(weight_diff, this->blobs_[0]->mutable_cpu_diff());
      }
      if (bias_grad) AccumulateInto(bias_diff_buffer_, this->blobs_[1].get());
    }
    if (propagate_down[i]) {
      if (!diff_dst || !share_diff_dst) diff_dst = p.args.data_diff_dst.In(top_diff);
      Dtype* bottom_diff = bottom[i]->mutable_cpu_diff();
      DnnlRun(p.backward_data,
              {{DNNL_ARG_DIFF_SRC, p.args.data_diff_src.Out(bottom_diff)},
               {DNNL_ARG_WEIGHTS, p.args.data_weights.In(this->blobs_[0]->cpu_data())},
               {DNNL_ARG_DIFF_DST, diff_dst}});
      p.args.data_diff_src.Finish(bottom_diff);
    }
  }
}

template class DnnlTwin<float, ConvolutionLayer, DnnlConvolutionPrimitives>;
template class DnnlTwin<float, DepthwiseConvolutionLayer, DnnlConvolutionPrimitives>;
template class DnnlConvolutionTwin<float, ConvolutionLayer>;
template class DnnlConvolutionTwin<float, DepthwiseConvolutionLayer>;
REGISTER_DNNL_BODY(Convolution, DnnlConvolutionLayer<float>, true,
                   "oneDNN where its rule for the shape says (default_policy.hpp)");
// The forks' two depthwise type strings name one layer class.
REGISTER_DNNL_BODY(DepthwiseConvolution, DnnlDepthwiseConvolutionLayer<float>, true,
                   "oneDNN where its rule for the shape says (default_policy.hpp)");
REGISTER_DNNL_BODY(ConvolutionDepthwise, DnnlDepthwiseConvolutionLayer<float>, true,
                   "oneDNN where its rule for the shape says (default_policy.hpp)");

}  // namespace crema
