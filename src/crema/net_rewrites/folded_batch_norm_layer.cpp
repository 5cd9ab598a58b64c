#include "crema/net_rewrites/folded_batch_norm_layer.hpp"

namespace crema {

template <typename Dtype>
void FoldedBatchNormLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  this->ComputeStatistics_cpu(bottom[0]->cpu_data(), bottom[0]->count());
  normalization_pending_ = true;
}

template <typename Dtype>
void FoldedBatchNormLayer<Dtype>::FinishForward(Blob<Dtype>* top) {
  if (!TakePendingNormalization()) return;
  this->Normalize_cpu(top->cpu_data(), top->mutable_cpu_data(), nullptr);
}

template <typename Dtype>
void FoldedBatchNormLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  if (std::exchange(gradient_written_, false)) return;
  BatchNormLayer<Dtype>::Backward_cpu(top, propagate_down, bottom);
}

INSTANTIATE_CLASS(FoldedBatchNormLayer);

}  // namespace crema
