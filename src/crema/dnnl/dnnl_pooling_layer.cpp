#include "crema/dnnl/dnnl_pooling_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlPoolingPrimitives {
  dnnl::memory::desc src, dst;
  dnnl::pooling_forward forward;
  dnnl::pooling_backward backward;
  dnnl::memory workspace;  // MAX: where each window's maximum was
};

bool DnnlPoolingFormOf(PoolingParameter::PoolMethod method, const PoolingGeometry& g,
                       DnnlPoolingForm* form) {
  if (method == PoolingParameter::STOCHASTIC) return false;
  const int right_h = RightPadding(g.height, g.pooled_height, g.kernel_h, g.stride_h, g.pad_h);
  const int right_w = RightPadding(g.width, g.pooled_width, g.kernel_w, g.stride_w, g.pad_w);
  form->algorithm = dnnl::algorithm::pooling_max;
  if (method == PoolingParameter::AVE) {
    // Caffe divides by the window clipped to the padded input: the whole
    // kernel while no window passes the right padding, else (without
    // padding) the window's inputs.
    if (right_h <= g.pad_h && right_w <= g.pad_w) {
      form->algorithm = dnnl::algorithm::pooling_avg_include_padding;
    } else if (g.pad_h == 0 && g.pad_w == 0) {
      form->algorithm = dnnl::algorithm::pooling_avg_exclude_padding;
    } else {
      return false;
    }
  }
  form->strides = {g.stride_h, g.stride_w};
  form->kernel = {g.kernel_h, g.kernel_w};
  form->left = {g.pad_h, g.pad_w};
  form->right = {right_h, right_w};
  return true;
}

template <typename Dtype>
DnnlPoolingLayer<Dtype>::DnnlPoolingLayer(const LayerParameter& param)
    : DnnlTwin<Dtype, PoolingLayer, DnnlPoolingPrimitives>(param) {}

template <typename Dtype>
bool DnnlPoolingLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>& top,
                                             DnnlPoolingPrimitives* p) {
  const PoolingParameter::PoolMethod method = this->layer_param_.pooling_param().pool();
  if (method == PoolingParameter::STOCHASTIC || top.size() > 1) return false;
  const PoolingGeometry& g = this->geometry_;
  if (this->by_default_ && !DefaultPoolingRunsDnnl(method, g)) {
    return this->LeaveToReference("DEFAULT: unpadded 2x2 MAX at stride 2, the reference kernel's");
  }
  DnnlPoolingForm form;
  if (!DnnlPoolingFormOf(method, g, &form)) return false;
  p->src = PlainDesc(bottom[0]->shape());
  p->dst = PlainDesc(top[0]->shape());
  dnnl::pooling_forward::primitive_desc forward_pd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, form.algorithm, p->src, p->dst,
                                  form.strides, form.kernel, form.left, form.right),
      DnnlEngine());
  p->forward = dnnl::pooling_forward(forward_pd);
  p->backward = dnnl::pooling_backward(dnnl::pooling_backward::primitive_desc(
      dnnl::pooling_backward::desc(form.algorithm, p->src, p->dst, form.strides, form.kernel,
                                   form.left, form.right),
      DnnlEngine(), forward_pd));
  if (form.algorithm == dnnl::algorithm::pooling_max) {
    p->workspace = dnnl::memory(forward_pd.workspace_desc(), DnnlEngine());
  }
  return true;
}

template <typename Dtype>
void DnnlPoolingLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return PoolingLayer<Dtype>::Forward_cpu(bottom, top);
  const DnnlPoolingPrimitives& p = *this->primitives_;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, Wrap(p.src, bottom[0]->cpu_data())},
      {DNNL_ARG_DST, Wrap(p.dst, top[0]->mutable_cpu_data())}};
  if (p.workspace) args[DNNL_ARG_WORKSPACE] = p.workspace;
  DnnlRun(p.forward, args);
}

template <typename Dtype>
void DnnlPoolingLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->primitives_) return PoolingLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const DnnlPoolingPrimitives& p = *this->primitives_;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_DIFF_DST, Wrap(p.dst, top[0]->cpu_diff())},
      {DNNL_ARG_DIFF_SRC, Wrap(p.src, bottom[0]->mutable_cpu_diff())}};
  if (p.workspace) args[DNNL_ARG_WORKSPACE] = p.workspace;
  DnnlRun(p.backward, args);
}

template class DnnlTwin<float, PoolingLayer, DnnlPoolingPrimitives>;
template class DnnlPoolingLayer<float>;
REGISTER_DNNL_BODY(Pooling, DnnlPoolingLayer<float>, true,
                   "oneDNN where its rule for the shape says (default_policy.hpp)");

}  // namespace crema
