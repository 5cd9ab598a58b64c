#include <cfloat>

#include "crema/layers/softmax_loss_layer.hpp"

namespace crema {

// One thread per label position. An out-of-range label is flagged rather than
// read, so the host can report it as a user error.
template <typename Dtype>
__global__ void SoftmaxLossForwardKernel(const int64_t num_positions, const int num_classes,
                                         const int inner_num, const Dtype* prob, const Dtype* label,
                                         const bool has_ignore_label, const int ignore_label,
                                         const Dtype smoothing, Dtype* position_loss,
                                         Dtype* position_valid, Dtype* position_bad_label) {
  CUDA_KERNEL_LOOP(position, num_positions) {
    const int64_t outer = position / inner_num;
    const int64_t inner = position % inner_num;
    const Dtype value = label[position];
    const int label_value = static_cast<int>(value);
    position_loss[position] = 0;
    position_valid[position] = 0;
    position_bad_label[position] = 0;
    if (has_ignore_label && label_value == ignore_label) continue;
    // As LossLayer::ClassLabel: compared before the cast, a whole number in
    // range (1.5 is not class 1; NaN is nothing).
    if (!(value >= 0 && value < num_classes && floor(value) == value)) {
      position_bad_label[position] = 1;
      continue;
    }
    const Dtype* first = prob + outer * num_classes * inner_num + inner;
    const Dtype p = first[label_value * inner_num];
    Dtype loss = -log(p > Dtype(FLT_MIN) ? p : Dtype(FLT_MIN));
    if (smoothing != 0) {  // (1 - s) on the label, s / K on every class
      Dtype classes = 0;
      for (int c = 0; c < num_classes; ++c) {
        const Dtype q = first[c * inner_num];
        classes -= log(q > Dtype(FLT_MIN) ? q : Dtype(FLT_MIN));
      }
      loss = (1 - smoothing) * loss + smoothing / num_classes * classes;
    }
    position_loss[position] = loss;
    position_valid[position] = 1;
  }
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  if (weighted()) {
    Forward_cpu(bottom, top);
    return;
  }
  softmax_layer_->Forward(softmax_bottom_vec_, softmax_top_vec_);
  const int num_positions = outer_num_ * inner_num_;
  SoftmaxLossForwardKernel<Dtype><<<CREMA_GET_BLOCKS(num_positions), CREMA_CUDA_NUM_THREADS>>>(
      num_positions, num_classes_, inner_num_, prob_.gpu_data(), bottom[1]->gpu_data(),
      has_ignore_label_, ignore_label_, smoothing_, position_loss_.mutable_gpu_data(),
      position_valid_.mutable_gpu_data(), position_bad_label_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  Dtype bad_labels = 0;
  gpu_asum(num_positions, position_bad_label_.gpu_data(), &bad_labels);
  if (bad_labels > 0) {
    this->ThrowForFirstBadLabel(*bottom[1], num_classes_, has_ignore_label_, ignore_label_);
  }
  // Every term is non-negative, so the absolute sum is the sum.
  Dtype loss = 0;
  gpu_asum(num_positions, position_loss_.gpu_data(), &loss);
  Dtype valid_count = 0;
  gpu_asum(num_positions, position_valid_.gpu_data(), &valid_count);
  top[0]->mutable_cpu_data()[0] = loss / this->Normalizer(normalization_, outer_num_, inner_num_,
                                                          static_cast<int>(valid_count));
  if (top.size() >= 2) top[1]->ShareData(prob_);
  if (top.size() >= 3) {
    gpu_memcpy(num_positions * sizeof(Dtype), position_loss_.gpu_data(),
               top[2]->mutable_gpu_data());
  }
}

template <typename Dtype>
__global__ void SoftmaxLossBackwardKernel(const int64_t num_positions, const int num_classes,
                                          const int inner_num, const Dtype* label,
                                          const bool has_ignore_label, const int ignore_label,
                                          const Dtype smoothing, Dtype* bottom_diff,
                                          Dtype* position_valid) {
  CUDA_KERNEL_LOOP(position, num_positions) {
    const int64_t outer = position / inner_num;
    const int64_t inner = position % inner_num;
    const int label_value = static_cast<int>(label[position]);
    Dtype* first = bottom_diff + outer * num_classes * inner_num + inner;
    if (has_ignore_label && label_value == ignore_label) {
      for (int c = 0; c < num_classes; ++c) first[c * inner_num] = 0;
      position_valid[position] = 0;
    } else {
      first[label_value * inner_num] -= 1 - smoothing;
      if (smoothing != 0) {
        for (int c = 0; c < num_classes; ++c) first[c * inner_num] -= smoothing / num_classes;
      }
      position_valid[position] = 1;
    }
  }
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  if (weighted()) {
    Backward_cpu(top, propagate_down, bottom);
    return;
  }
  this->RequireNoGradient(propagate_down, 1, "the labels");
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  gpu_memcpy(prob_.count() * sizeof(Dtype), prob_.gpu_data(), bottom_diff);
  const int num_positions = outer_num_ * inner_num_;
  SoftmaxLossBackwardKernel<Dtype><<<CREMA_GET_BLOCKS(num_positions), CREMA_CUDA_NUM_THREADS>>>(
      num_positions, num_classes_, inner_num_, bottom[1]->gpu_data(), has_ignore_label_,
      ignore_label_, smoothing_, bottom_diff, position_valid_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  Dtype valid_count = 0;
  gpu_asum(num_positions, position_valid_.gpu_data(), &valid_count);
  const Dtype scale =
      top[0]->cpu_diff()[0] /
      this->Normalizer(normalization_, outer_num_, inner_num_, static_cast<int>(valid_count));
  gpu_scal(prob_.count(), scale, bottom_diff);
}

INSTANTIATE_LAYER_GPU_FUNCS(SoftmaxWithLossLayer);

}  // namespace crema
