#include "crema/layers/dnnl_conv_layer.hpp"

#ifdef CREMA_DNNL

#include <type_traits>

#include "crema/util/dnnl.hpp"

namespace crema {

template <typename Dtype>
struct DnnlConvolutionLayer<Dtype>::Primitives {
  dnnl::memory::desc src, weights, bias, dst;
  dnnl::convolution_forward forward;
  dnnl::convolution_backward_data backward_data;
  dnnl::convolution_backward_weights backward_weights;
};

template <typename Dtype>
DnnlConvolutionLayer<Dtype>::DnnlConvolutionLayer(const LayerParameter& param)
    : ConvolutionLayer<Dtype>(param) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype>
DnnlConvolutionLayer<Dtype>::~DnnlConvolutionLayer() = default;

template <typename Dtype>
void DnnlConvolutionLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  ConvolutionLayer<Dtype>::Reshape(bottom, top);
  if (bottom[0]->shape() == primitive_shape_) return;
  primitive_shape_ = bottom[0]->shape();
  MakePrimitives(*bottom[0], *top[0]);
}

template <typename Dtype>
void DnnlConvolutionLayer<Dtype>::MakePrimitives(const Blob<Dtype>& bottom,
                                                 const Blob<Dtype>& top) {
  primitives_.reset();
  if (this->num_spatial_axes_ != 2 || this->channel_axis_ != 1 || bottom.num_axes() != 4) return;
  using dims = dnnl::memory::dims;
  dims strides, dilates, pad_left, pad_right;
  for (int axis = 0; axis < 2; ++axis) {
    const int extent = this->dilation_[axis] * (this->kernel_shape_[axis] - 1) + 1;
    strides.push_back(this->stride_[axis]);
    dilates.push_back(this->dilation_[axis] - 1);
    pad_left.push_back(this->pad_[axis]);
    pad_right.push_back(RightPadding(this->input_spatial_shape_[axis],
                                     this->output_spatial_shape_[axis], extent, this->stride_[axis],
                                     this->pad_[axis]));
  }
  std::unique_ptr<Primitives> p(new Primitives());
  p->src = PlainDesc(bottom.shape());
  p->dst = PlainDesc(top.shape());
  const int group = this->group_;
  const int out = this->num_output_, in = this->channels_;
  const int kh = this->kernel_shape_[0], kw = this->kernel_shape_[1];
  p->weights = group == 1 ? PlainDesc({out, in, kh, kw})
                          : PlainDesc({group, out / group, in / group, kh, kw});
  if (this->bias_term_) p->bias = PlainDesc({out});
  try {
    DnnlUseThreadBudget();
    const auto algorithm = dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::desc forward(dnnl::prop_kind::forward_training, algorithm, p->src,
                                            p->weights, p->bias, p->dst, strides, dilates, pad_left,
                                            pad_right);
    dnnl::convolution_forward::primitive_desc forward_pd(forward, DnnlEngine());
    dnnl::convolution_backward_data::desc data(algorithm, p->src, p->weights, p->dst, strides,
                                               dilates, pad_left, pad_right);
    dnnl::convolution_backward_weights::desc weights(algorithm, p->src, p->weights, p->bias, p->dst,
                                                     strides, dilates, pad_left, pad_right);
    p->forward = dnnl::convolution_forward(forward_pd);
    p->backward_data = dnnl::convolution_backward_data(
        dnnl::convolution_backward_data::primitive_desc(data, DnnlEngine(), forward_pd));
    p->backward_weights = dnnl::convolution_backward_weights(
        dnnl::convolution_backward_weights::primitive_desc(weights, DnnlEngine(), forward_pd));
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name()
                 << "': oneDNN has no convolution for this shape (" << e.what()
                 << "); the reference body runs";
    return;
  }
  weight_diff_buffer_.ReshapeLike(*this->blobs_[0]);
  if (this->bias_term_) bias_diff_buffer_.ReshapeLike(*this->blobs_[1]);
  primitives_ = std::move(p);
}

template <typename Dtype>
void DnnlConvolutionLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  if (!primitives_) return ConvolutionLayer<Dtype>::Forward_cpu(bottom, top);
  const Primitives& p = *primitives_;
  for (size_t i = 0; i < bottom.size(); ++i) {
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, Wrap(p.src, bottom[i]->cpu_data())},
        {DNNL_ARG_WEIGHTS, Wrap(p.weights, this->blobs_[0]->cpu_data())},
        {DNNL_ARG_DST, Wrap(p.dst, top[i]->mutable_cpu_data())}};
    if (this->bias_term_) args[DNNL_ARG_BIAS] = Wrap(p.bias, this->blobs_[1]->cpu_data());
    DnnlRun(p.forward, args);
  }
}

template <typename Dtype>
void DnnlConvolutionLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  if (!primitives_) return ConvolutionLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  const Primitives& p = *primitives_;
  const bool weight_grad = this->param_propagate_down(0);
  const bool bias_grad = this->bias_term_ && this->param_propagate_down(1);
  for (size_t i = 0; i < top.size(); ++i) {
    const dnnl::memory top_diff = Wrap(p.dst, top[i]->cpu_diff());
    if (weight_grad || bias_grad) {
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, Wrap(p.src, bottom[i]->cpu_data())},
          {DNNL_ARG_DIFF_DST, top_diff},
          {DNNL_ARG_DIFF_WEIGHTS, Wrap(p.weights, weight_diff_buffer_.mutable_cpu_data())}};
      if (this->bias_term_) {
        args[DNNL_ARG_DIFF_BIAS] = Wrap(p.bias, bias_diff_buffer_.mutable_cpu_data());
      }
      DnnlRun(p.backward_weights, args);
      if (weight_grad) AccumulateInto(weight_diff_buffer_, this->blobs_[0].get());
      if (bias_grad) AccumulateInto(bias_diff_buffer_, this->blobs_[1].get());
    }
    if (propagate_down[i]) {
      DnnlRun(p.backward_data, {{DNNL_ARG_DIFF_SRC, Wrap(p.src, bottom[i]->mutable_cpu_diff())},
                                {DNNL_ARG_WEIGHTS, Wrap(p.weights, this->blobs_[0]->cpu_data())},
                                {DNNL_ARG_DIFF_DST, top_diff}});
    }
  }
}

template class DnnlConvolutionLayer<float>;

}  // namespace crema

#endif  // CREMA_DNNL
