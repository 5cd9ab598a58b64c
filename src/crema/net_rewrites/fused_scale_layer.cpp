#include "crema/net_rewrites/fused_scale_layer.hpp"

#include <type_traits>

namespace crema {

template <typename Dtype>
void FusedScaleLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>& top) {
  forward_folded_ = batch_norm_ && batch_norm_->TakePendingNormalization();
  const Dtype* mean = forward_folded_ ? batch_norm_->mean() : nullptr;
  const Dtype* std = forward_folded_ ? batch_norm_->std() : nullptr;
  const Dtype* scale = this->ScaleBlob(bottom)->cpu_data();
  const Blob<Dtype>* bias_blob = this->BiasBlob();
  const Dtype* bias = bias_blob ? bias_blob->cpu_data() : nullptr;
  Dtype* copy = bottom[0] == top[0] ? this->bottom_copy()->mutable_cpu_data() : nullptr;
  Dtype* top_data = top[0]->mutable_cpu_data();
  if (ForwardFromHandedBottom(mean, std, scale, bias, copy ? copy : bottom[0]->mutable_cpu_data(),
                              top_data)) {
    return;
  }
  this->AffinePlanes_cpu(bottom[0]->cpu_data(), top_data, copy, mean, std, scale, bias);
}

template <typename Dtype>
bool FusedScaleLayer<Dtype>::ForwardFromHandedBottom(const Dtype* mean, const Dtype* std,
                                                     const Dtype* scale, const Dtype* bias,
                                                     Dtype* bottom_data, Dtype* top_data) {
  if (!handed_bottom_) return false;
  if constexpr (std::is_same<Dtype, float>::value) {
    const int channels = this->scale_dim();
    channel_factors_.resize(channels);
    for (int d = 0; d < channels; ++d) channel_factors_[d] = mean ? scale[d] / std[d] : scale[d];
    zeros_.assign(mean && !bias ? channels : 0, Dtype(0));
    return handed_bottom_->MoveInto(
        this->outer_dim(), channels, this->inner_dim(), mean, channel_factors_.data(),
        bias ? bias : (mean ? zeros_.data() : nullptr), bottom_data, top_data);
  }
  LOG(FATAL) << "layer '" << this->layer_param_.name()
             << "': a bottom was handed over to a double layer, which cannot read it";
  return false;
}

template <typename Dtype>
void FusedScaleLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                          const std::vector<bool>& propagate_down,
                                          const std::vector<Blob<Dtype>*>& bottom) {
  // After a folded forward pass the kept copy is the BatchNorm's input x,
  // and this layer's own input is (x - mean) / std.
  const Dtype* mean = forward_folded_ ? batch_norm_->mean() : nullptr;
  const Dtype* std = forward_folded_ ? batch_norm_->std() : nullptr;
  const bool through_batch_norm = mean && fold_backward_;
  this->AffineBackward_cpu(top, propagate_down, bottom, mean, std, through_batch_norm);
  if (through_batch_norm && propagate_down[0]) batch_norm_->MarkGradientWritten();
}

INSTANTIATE_CLASS(FusedScaleLayer);

}  // namespace crema
