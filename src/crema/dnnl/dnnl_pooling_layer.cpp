#include "crema/dnnl/dnnl_pooling_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
struct DnnlPoolingLayer<Dtype>::Primitives {
  dnnl::memory::desc src, dst;
  dnnl::pooling_forward forward;
  dnnl::pooling_backward backward;
  dnnl::memory workspace;  // MAX: where each window's maximum was
};

template <typename Dtype>
DnnlPoolingLayer<Dtype>::DnnlPoolingLayer(const LayerParameter& param, bool for_default)
    : PoolingLayer<Dtype>(param), for_default_(for_default) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype>
DnnlPoolingLayer<Dtype>::~DnnlPoolingLayer() = default;

template <typename Dtype>
void DnnlPoolingLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  PoolingLayer<Dtype>::Reshape(bottom, top);
  if (bottom[0]->shape() == primitive_shape_) return;
  primitive_shape_ = bottom[0]->shape();
  MakePrimitives(*bottom[0], top);
}

template <typename Dtype>
void DnnlPoolingLayer<Dtype>::MakePrimitives(const Blob<Dtype>& bottom,
                                             const std::vector<Blob<Dtype>*>& top) {
  primitives_.reset();
  const PoolingParameter::PoolMethod method = this->layer_param_.pooling_param().pool();
  if (method == PoolingParameter::STOCHASTIC || top.size() > 1) return;
  const PoolingGeometry& g = this->geometry_;
  if (for_default_ && !DefaultPoolingRunsDnnl(method, g)) return;
  const int right_h = RightPadding(g.height, g.pooled_height, g.kernel_h, g.stride_h, g.pad_h);
  const int right_w = RightPadding(g.width, g.pooled_width, g.kernel_w, g.stride_w, g.pad_w);
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  if (method == PoolingParameter::AVE) {
    // Caffe divides by the window clipped to the padded input: the whole
    // kernel while no window passes the right padding, else (without
    // padding) the window's inputs.
    if (right_h <= g.pad_h && right_w <= g.pad_w) {
      algorithm = dnnl::algorithm::pooling_avg_include_padding;
    } else if (g.pad_h == 0 && g.pad_w == 0) {
      algorithm = dnnl::algorithm::pooling_avg_exclude_padding;
    } else {
      return;
    }
  }
  std::unique_ptr<Primitives> p(new Primitives());
  p->src = PlainDesc(bottom.shape());
  p->dst = PlainDesc(top[0]->shape());
  const dnnl::memory::dims strides{g.stride_h, g.stride_w}, kernel{g.kernel_h, g.kernel_w},
      left{g.pad_h, g.pad_w}, right{right_h, right_w};
  try {
    DnnlUseThreadBudget();
    dnnl::pooling_forward::primitive_desc forward_pd(
        dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, algorithm, p->src, p->dst,
                                    strides, kernel, left, right),
        DnnlEngine());
    p->forward = dnnl::pooling_forward(forward_pd);
    p->backward = dnnl::pooling_backward(dnnl::pooling_backward::primitive_desc(
        dnnl::pooling_backward::desc(algorithm, p->src, p->dst, strides, kernel, left, right),
        DnnlEngine(), forward_pd));
    if (algorithm == dnnl::algorithm::pooling_max) {
      p->workspace = dnnl::memory(forward_pd.workspace_desc(), DnnlEngine());
    }
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name()
                 << "': oneDNN has no pooling for this shape (" << e.what()
                 << "); the reference body runs";
    return;
  }
  primitives_ = std::move(p);
}

template <typename Dtype>
void DnnlPoolingLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  if (!primitives_) return PoolingLayer<Dtype>::Forward_cpu(bottom, top);
  const Primitives& p = *primitives_;
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
  if (!primitives_) return PoolingLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const Primitives& p = *primitives_;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_DIFF_DST, Wrap(p.dst, top[0]->cpu_diff())},
      {DNNL_ARG_DIFF_SRC, Wrap(p.src, bottom[0]->mutable_cpu_diff())}};
  if (p.workspace) args[DNNL_ARG_WORKSPACE] = p.workspace;
  DnnlRun(p.backward, args);
}

template class DnnlPoolingLayer<float>;
REGISTER_DNNL_LAYER(Pooling);

}  // namespace crema
