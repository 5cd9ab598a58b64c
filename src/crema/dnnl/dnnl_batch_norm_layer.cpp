#include "crema/dnnl/dnnl_batch_norm_layer.hpp"

#include <type_traits>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
struct DnnlBatchNormLayer<Dtype>::Primitives {
  dnnl::memory::desc data;        // [num, channels, spatial, 1]
  dnnl::memory::desc statistics;  // [channels]
  dnnl::batch_normalization_forward forward;
  dnnl::batch_normalization_backward backward;
};

template <typename Dtype>
DnnlBatchNormLayer<Dtype>::DnnlBatchNormLayer(const LayerParameter& param, bool)
    : BatchNormLayer<Dtype>(param) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype>
DnnlBatchNormLayer<Dtype>::~DnnlBatchNormLayer() = default;

template <typename Dtype>
void DnnlBatchNormLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  BatchNormLayer<Dtype>::Reshape(bottom, top);
  if (bottom[0] == top[0]) bottom_copy_.ReshapeLike(*bottom[0]);
  const std::vector<int> shape{this->num_, this->channels_, this->spatial_dim_, 1};
  if (shape == primitive_shape_) return;
  primitive_shape_ = shape;
  MakePrimitives(bottom);
}

template <typename Dtype>
void DnnlBatchNormLayer<Dtype>::MakePrimitives(const std::vector<Blob<Dtype>*>& bottom) {
  primitives_.reset();
  if (bottom[0]->count() == 0) return;
  std::unique_ptr<Primitives> p(new Primitives());
  p->data = PlainDesc(primitive_shape_);
  p->statistics = PlainDesc({this->channels_});
  // No learned scale and shift (Caffe's BatchNorm has none; a Scale layer does that).
  const auto flags = this->use_global_stats_ ? dnnl::normalization_flags::use_global_stats
                                             : dnnl::normalization_flags::none;
  const float eps = this->eps_;
  try {
    DnnlUseThreadBudget();
    dnnl::batch_normalization_forward::primitive_desc forward_pd(
        dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, p->data, eps,
                                                flags),
        DnnlEngine());
    p->forward = dnnl::batch_normalization_forward(forward_pd);
    p->backward =
        dnnl::batch_normalization_backward(dnnl::batch_normalization_backward::primitive_desc(
            dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward_data, p->data,
                                                     p->data, eps, flags),
            DnnlEngine(), forward_pd));
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name()
                 << "': oneDNN has no batch normalisation here (" << e.what()
                 << "); the reference body runs";
    return;
  }
  primitives_ = std::move(p);
}

template <typename Dtype>
void DnnlBatchNormLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  if (!primitives_) return BatchNormLayer<Dtype>::Forward_cpu(bottom, top);
  const Primitives& p = *primitives_;
  const int channels = this->channels_;
  if (bottom[0] == top[0]) bottom_copy_.CopyFrom(*bottom[0]);
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
  if (!primitives_) return BatchNormLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const Primitives& p = *primitives_;
  const Blob<Dtype>& input = bottom[0] == top[0] ? bottom_copy_ : *bottom[0];
  DnnlRun(p.backward, {{DNNL_ARG_SRC, Wrap(p.data, input.cpu_data())},
                       {DNNL_ARG_MEAN, Wrap(p.statistics, this->mean_.cpu_data())},
                       {DNNL_ARG_VARIANCE, Wrap(p.statistics, this->variance_.cpu_data())},
                       {DNNL_ARG_DIFF_DST, Wrap(p.data, top[0]->cpu_diff())},
                       {DNNL_ARG_DIFF_SRC, Wrap(p.data, bottom[0]->mutable_cpu_diff())}});
}

template class DnnlBatchNormLayer<float>;
REGISTER_DNNL_LAYER(BatchNorm);

}  // namespace crema
