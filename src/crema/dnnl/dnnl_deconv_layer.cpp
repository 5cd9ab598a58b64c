#include "crema/dnnl/dnnl_deconv_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlDeconvolutionPrimitives {
  dnnl::memory::desc src, weights, bias, dst;
  dnnl::deconvolution_forward forward;
  dnnl::deconvolution_backward_data backward_data;
  dnnl::deconvolution_backward_weights backward_weights;
};

template <typename Dtype>
DnnlDeconvolutionLayer<Dtype>::DnnlDeconvolutionLayer(const LayerParameter& param)
    : DnnlTwin<Dtype, DeconvolutionLayer, DnnlDeconvolutionPrimitives>(param) {}

template <typename Dtype>
bool DnnlDeconvolutionLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                                                   const std::vector<Blob<Dtype>*>&,
                                                   DnnlDeconvolutionPrimitives* p) {
  if (this->num_spatial_axes_ != 2 || this->channel_axis_ != 1 || bottom[0]->num_axes() != 4) {
    return false;
  }
  std::vector<int> top_shape = bottom[0]->shape();
  top_shape[1] = this->num_output_;
  using dims = dnnl::memory::dims;
  dims strides, dilates, pad_left, pad_right;
  for (int axis = 0; axis < 2; ++axis) {
    const int extent = this->dilation_[axis] * (this->kernel_shape_[axis] - 1) + 1;
    const int input = bottom[0]->shape(2 + axis);
    const int output = (input - 1) * this->stride_[axis] + extent - 2 * this->pad_[axis];
    top_shape[2 + axis] = output;
    // A deconvolution is the convolution from its output back to its input.
    strides.push_back(this->stride_[axis]);
    dilates.push_back(this->dilation_[axis] - 1);
    pad_left.push_back(this->pad_[axis]);
    pad_right.push_back(RightPadding(output, input, extent, this->stride_[axis], this->pad_[axis]));
  }
  p->src = PlainDesc(bottom[0]->shape());
  p->dst = PlainDesc(top_shape);
  // Caffe keeps [in, out / group, kh, kw]; oneDNN's dims are [(group,) out, in, kh, kw].
  const int group = this->group_, out = this->num_output_ / group, in = this->channels_ / group;
  const int kh = this->kernel_shape_[0], kw = this->kernel_shape_[1], plane = kh * kw;
  p->weights = group == 1 ? StridedDesc({out, in, kh, kw}, {plane, out * plane, kw, 1})
                          : StridedDesc({group, out, in, kh, kw},
                                        {in * out * plane, plane, out * plane, kw, 1});
  if (this->bias_term_) p->bias = PlainDesc({this->num_output_});
  const auto algorithm = dnnl::algorithm::deconvolution_direct;
  dnnl::deconvolution_forward::primitive_desc forward_pd(
      dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_training, algorithm, p->src,
                                        p->weights, p->bias, p->dst, strides, dilates, pad_left,
                                        pad_right),
      DnnlEngine());
  p->forward = dnnl::deconvolution_forward(forward_pd);
  p->backward_data =
      dnnl::deconvolution_backward_data(dnnl::deconvolution_backward_data::primitive_desc(
          dnnl::deconvolution_backward_data::desc(algorithm, p->src, p->weights, p->dst, strides,
                                                  dilates, pad_left, pad_right),
          DnnlEngine(), forward_pd));
  p->backward_weights =
      dnnl::deconvolution_backward_weights(dnnl::deconvolution_backward_weights::primitive_desc(
          dnnl::deconvolution_backward_weights::desc(algorithm, p->src, p->weights, p->bias, p->dst,
                                                     strides, dilates, pad_left, pad_right),
          DnnlEngine(), forward_pd));
  return true;
}

template <typename Dtype>
void DnnlDeconvolutionLayer<Dtype>::PrimitivesMade() {
  weight_diff_buffer_.ReshapeLike(*this->blobs_[0]);
  if (this->bias_term_) bias_diff_buffer_.ReshapeLike(*this->blobs_[1]);
}

template <typename Dtype>
void DnnlDeconvolutionLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return DeconvolutionLayer<Dtype>::Forward_cpu(bottom, top);
  const DnnlDeconvolutionPrimitives& p = *this->primitives_;
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
void DnnlDeconvolutionLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                 const std::vector<bool>& propagate_down,
                                                 const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->primitives_)
    return DeconvolutionLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  const DnnlDeconvolutionPrimitives& p = *this->primitives_;
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

template class DnnlTwin<float, DeconvolutionLayer, DnnlDeconvolutionPrimitives>;
template class DnnlDeconvolutionLayer<float>;
REGISTER_DNNL_BODY(Deconvolution, DnnlDeconvolutionLayer<float>, false,
                   "the reference body; oneDNN not measured faster on a net yet");

}  // namespace crema
