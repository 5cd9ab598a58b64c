#include "crema/dnnl/dnnl_batch_norm_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlBatchNormPrimitives {
  dnnl::memory::desc data;        // [num, channels, spatial, 1]
  dnnl::memory::desc statistics;  // [channels]
  dnnl::batch_normalization_forward forward;
  dnnl::batch_normalization_backward backward;
};

template <typename Dtype>
DnnlBatchNormLayer<Dtype>::DnnlBatchNormLayer(const LayerParameter& param)
    : DnnlTwin<Dtype, BatchNormLayer, DnnlBatchNormPrimitives>(param) {}

template <typename Dtype>
std::vector<int> DnnlBatchNormLayer<Dtype>::PrimitiveShape(const std::vector<Blob<Dtype>*>&) const {
  return {this->num_, this->channels_, this->spatial_dim_, 1};
}

template <typename Dtype>
bool DnnlBatchNormLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                                               const std::vector<Blob<Dtype>*>&,
                                               DnnlBatchNormPrimitives* p) {
  // The forks' learned scale and bias (scale_bias) run the reference body.
  if (bottom[0]->count() == 0 || this->scale_bias_) return false;
  p->data = PlainDesc(PrimitiveShape(bottom));
  p->statistics = PlainDesc({this->channels_});
  // No learned scale and shift (Caffe's BatchNorm has none; a Scale layer does that).
  const auto flags = this->use_global_stats_ ? dnnl::normalization_flags::use_global_stats
                                             : dnnl::normalization_flags::none;
  const float eps = this->eps_;
  dnnl::batch_normalization_forward::primitive_desc forward_pd(
      dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, p->data, eps,
                                              flags),
      DnnlEngine());
  p->forward = dnnl::batch_normalization_forward(forward_pd);
  p->backward =
      dnnl::batch_normalization_backward(dnnl::batch_normalization_backward::primitive_desc(
          dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward_data, p->data, p->data,
                                                   eps, flags),
          DnnlEngine(), forward_pd));
  return true;
}

template <typename Dtype>
void DnnlBatchNormLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  if (!this->primitives_) return BatchNormLayer<Dtype>::Forward_cpu(bottom, top);
  const DnnlBatchNormPrimitives& p = *this->primitives_;
  const int channels = this->channels_;
  if (bottom[0] == top[0]) bottom_copy_.CopyFrom(*bottom[0], false, true);
  Dtype* mean = this->mean_.mutable_cpu_data();
  Dtype* variance = this->variance_.mutable_cpu_data();
  if (this->use_global_stats_) {
    const Dtype scale = this->RunningAverageScale();
    cpu_scale(channels, scale, this->blobs_[0]->cpu_data(), mean);
    cpu_scale(channels, scale, this->blobs_[1]->cpu_data(), variance);
  }
  // With batch statistics oneDNN writes the mean and variance; with global
  // ones it reads them.
  DnnlRun(p.forward, {{DNNL_ARG_SRC, Wrap(p.data, bottom[0]->cpu_data())},
                      {DNNL_ARG_MEAN, Wrap(p.statistics, mean)},
                      {DNNL_ARG_VARIANCE, Wrap(p.statistics, variance)},
                      {DNNL_ARG_DST, Wrap(p.data, top[0]->mutable_cpu_data())}});
  if (!this->use_global_stats_) {
    this->UpdateRunningStatistics(this->mean_.cpu_data(), this->variance_.cpu_data(),
                                  bottom[0]->count());
  }
}

template <typename Dtype>
void DnnlBatchNormLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                             const std::vector<bool>& propagate_down,
                                             const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->primitives_) return BatchNormLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const DnnlBatchNormPrimitives& p = *this->primitives_;
  const Blob<Dtype>& input = bottom[0] == top[0] ? bottom_copy_ : *bottom[0];
  DnnlRun(p.backward, {{DNNL_ARG_SRC, Wrap(p.data, input.cpu_data())},
                       {DNNL_ARG_MEAN, Wrap(p.statistics, this->mean_.cpu_data())},
                       {DNNL_ARG_VARIANCE, Wrap(p.statistics, this->variance_.cpu_data())},
                       {DNNL_ARG_DIFF_DST, Wrap(p.data, top[0]->cpu_diff())},
                       {DNNL_ARG_DIFF_SRC, Wrap(p.data, bottom[0]->mutable_cpu_diff())}});
}

template class DnnlTwin<float, BatchNormLayer, DnnlBatchNormPrimitives>;
template class DnnlBatchNormLayer<float>;
REGISTER_DNNL_BODY(BatchNorm, DnnlBatchNormLayer<float>, false,
                   "the reference body; oneDNN not measured faster on a net yet");

}  // namespace crema
