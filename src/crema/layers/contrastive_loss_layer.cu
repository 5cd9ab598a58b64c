#include "crema/layers/contrastive_loss_layer.hpp"

namespace crema {

// One thread per pair: its squared distance, summed in a fixed order.
template <typename Dtype>
__global__ void ContrastiveSquaredDistance(const int64_t num, const int dim,
                                           const Dtype* difference, Dtype* squared_distance) {
  CUDA_KERNEL_LOOP(i, num) {
    const Dtype* row = difference + i * dim;
    Dtype sum = 0;
    for (int k = 0; k < dim; ++k) sum += row[k] * row[k];
    squared_distance[i] = sum;
  }
}

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  const int num = bottom[0]->shape(0);
  const int dim = bottom[0]->count(1);
  gpu_sub(bottom[0]->count(), bottom[0]->gpu_data(), bottom[1]->gpu_data(),
          difference_.mutable_gpu_data());
  ContrastiveSquaredDistance<Dtype><<<CREMA_GET_BLOCKS(num), CREMA_CUDA_NUM_THREADS>>>(
      num, dim, difference_.gpu_data(), squared_distance_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  // N values: the final sum is cheaper on the host than another kernel.
  top[0]->mutable_cpu_data()[0] =
      LossFromDistances(squared_distance_.cpu_data(), bottom[2]->cpu_data());
}

template <typename Dtype>
__global__ void ContrastiveBackwardKernel(const int64_t count, const int dim,
                                          const bool legacy_version, const Dtype margin,
                                          const Dtype scale, const Dtype* pair_label,
                                          const Dtype* difference, const Dtype* squared_distance,
                                          Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, count) {
    const int64_t i = index / dim;
    Dtype pair_scale = 0;
    if (static_cast<int>(pair_label[i]) != 0) {
      pair_scale = scale;
    } else if (legacy_version) {
      if (margin - squared_distance[i] > 0) pair_scale = -scale;
    } else {
      const Dtype distance = sqrt(squared_distance[i]);
      const Dtype shortfall = margin - distance;
      if (shortfall > 0) pair_scale = -scale * shortfall / (distance + Dtype(1e-4));
    }
    bottom_diff[index] = pair_scale * difference[index];
  }
}

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  this->RequireNoGradient(propagate_down, 2, "the pair labels");
  const ContrastiveLossParameter& param = this->layer_param_.contrastive_loss_param();
  const int num = bottom[0]->shape(0);
  const int dim = bottom[0]->count(1);
  const int count = bottom[0]->count();
  for (int b = 0; b < 2; ++b) {
    if (!propagate_down[b]) continue;
    const Dtype scale = (b == 0 ? 1 : -1) * top[0]->cpu_diff()[0] / num;
    ContrastiveBackwardKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, dim, param.legacy_version(), Dtype(param.margin()), scale, bottom[2]->gpu_data(),
        difference_.gpu_data(), squared_distance_.gpu_data(), bottom[b]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ContrastiveLossLayer);

}  // namespace crema
