#include "crema/layers/sigmoid_cross_entropy_loss_layer.hpp"

namespace crema {

template <typename Dtype>
__global__ void SigmoidCrossEntropyForwardKernel(const int64_t count, const Dtype* score,
                                                 const Dtype* target, const bool has_ignore_label,
                                                 const int ignore_label, Dtype* sigmoid,
                                                 Dtype* element_loss, Dtype* element_valid,
                                                 Dtype* element_bad) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = score[i];
    const Dtype e = exp(-fabs(x));
    sigmoid[i] = x >= 0 ? 1 / (1 + e) : e / (1 + e);
    const bool ignored = has_ignore_label && static_cast<int>(target[i]) == ignore_label;
    const bool bad = !ignored && !(target[i] >= 0 && target[i] <= 1);
    element_bad[i] = bad ? 1 : 0;
    if (ignored || bad) {
      element_loss[i] = 0;
      element_valid[i] = 0;
    } else {
      element_loss[i] = (x > 0 ? x : Dtype(0)) - x * target[i] + log1p(e);
      element_valid[i] = 1;
    }
  }
}

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                                      const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  SigmoidCrossEntropyForwardKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), has_ignore_label_, ignore_label_,
      sigmoid_output_.mutable_gpu_data(), element_loss_.mutable_gpu_data(),
      element_valid_.mutable_gpu_data(), element_bad_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  Dtype bad_targets = 0;
  gpu_asum(count, element_bad_.gpu_data(), &bad_targets);
  if (bad_targets > 0) ThrowForFirstBadTarget(*bottom[1]);
  // A dot with ones is a true sum (asum would fold the sign of a negative
  // term from a target outside [0, 1]).
  Dtype loss = 0;
  gpu_dot(count, element_loss_.gpu_data(), ones_.gpu_data(), &loss);
  Dtype valid_count = 0;
  gpu_asum(count, element_valid_.gpu_data(), &valid_count);
  normalizer_ =
      this->Normalizer(normalization_, outer_num_, inner_num_, static_cast<int>(valid_count));
  top[0]->mutable_cpu_data()[0] = loss / normalizer_;
}

template <typename Dtype>
__global__ void SigmoidCrossEntropyBackwardKernel(const int64_t count, const Dtype* sigmoid,
                                                  const Dtype* target, const bool has_ignore_label,
                                                  const int ignore_label, const Dtype scale,
                                                  Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const bool ignored = has_ignore_label && static_cast<int>(target[i]) == ignore_label;
    bottom_diff[i] = ignored ? Dtype(0) : scale * (sigmoid[i] - target[i]);
  }
}

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                                       const std::vector<bool>& propagate_down,
                                                       const std::vector<Blob<Dtype>*>& bottom) {
  this->RequireNoGradient(propagate_down, 1, "the targets");
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype scale = top[0]->cpu_diff()[0] / normalizer_;
  SigmoidCrossEntropyBackwardKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, sigmoid_output_.gpu_data(), bottom[1]->gpu_data(), has_ignore_label_, ignore_label_,
      scale, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(SigmoidCrossEntropyLossLayer);

}  // namespace crema
