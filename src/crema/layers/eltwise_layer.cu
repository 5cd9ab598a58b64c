#include "crema/layers/eltwise_layer.hpp"

namespace crema {

// Folds one more bottom into the running maximum; strictly greater, so on
// ties the earlier bottom keeps the element.
template <typename Dtype>
__global__ void MaxFold(const int64_t n, const Dtype* bottom_data, int bottom_index,
                        Dtype* top_data, int* max_index) {
  CUDA_KERNEL_LOOP(index, n) {
    if (bottom_data[index] > top_data[index]) {
      top_data[index] = bottom_data[index];
      max_index[index] = bottom_index;
    }
  }
}

template <typename Dtype>
__global__ void MaxBackward(const int64_t n, const Dtype* top_diff, int bottom_index,
                            const int* max_index, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    bottom_diff[index] = max_index[index] == bottom_index ? top_diff[index] : Dtype(0);
  }
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const int count = top[0]->count();
  Dtype* top_data = top[0]->mutable_gpu_data();
  switch (operation_) {
    case EltwiseParameter::PROD:
      gpu_mul(count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), top_data);
      for (size_t i = 2; i < bottom.size(); ++i) {
        gpu_mul(count, top_data, bottom[i]->gpu_data(), top_data);
      }
      break;
    case EltwiseParameter::SUM:
      gpu_set(count, Dtype(0), top_data);
      for (size_t i = 0; i < bottom.size(); ++i) {
        gpu_axpy(count, coeffs_[i], bottom[i]->gpu_data(), top_data);
      }
      break;
    case EltwiseParameter::MAX: {
      int* max_index = static_cast<int*>(max_index_->mutable_gpu_data());
      gpu_memcpy(count * sizeof(Dtype), bottom[0]->gpu_data(), top_data);
      gpu_memset(count * sizeof(int), 0, max_index);
      for (size_t i = 1; i < bottom.size(); ++i) {
        MaxFold<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
            count, bottom[i]->gpu_data(), static_cast<int>(i), top_data, max_index);
        CUDA_POST_KERNEL_CHECK;
      }
      break;
    }
    default:
      LOG(FATAL) << "unknown Eltwise operation " << operation_;
  }
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  const int count = top[0]->count();
  const Dtype* top_diff = top[0]->gpu_diff();
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate_down[i]) continue;
    Dtype* bottom_diff = bottom[i]->mutable_gpu_diff();
    switch (operation_) {
      case EltwiseParameter::PROD:
        if (stable_prod_grad_) {
          bool started = false;
          for (size_t j = 0; j < bottom.size(); ++j) {
            if (j == i) continue;
            if (started) {
              gpu_mul(count, bottom_diff, bottom[j]->gpu_data(), bottom_diff);
            } else {
              gpu_memcpy(count * sizeof(Dtype), bottom[j]->gpu_data(), bottom_diff);
              started = true;
            }
          }
        } else {
          gpu_div(count, top[0]->gpu_data(), bottom[i]->gpu_data(), bottom_diff);
        }
        gpu_mul(count, bottom_diff, top_diff, bottom_diff);
        break;
      case EltwiseParameter::SUM:
        gpu_scale(count, coeffs_[i], top_diff, bottom_diff);
        break;
      case EltwiseParameter::MAX:
        MaxBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
            count, top_diff, static_cast<int>(i), static_cast<const int*>(max_index_->gpu_data()),
            bottom_diff);
        CUDA_POST_KERNEL_CHECK;
        break;
      default:
        LOG(FATAL) << "unknown Eltwise operation " << operation_;
    }
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(EltwiseLayer);

}  // namespace crema
