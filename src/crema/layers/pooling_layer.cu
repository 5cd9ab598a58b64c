#include "crema/layers/pooling_layer.hpp"

namespace crema {

namespace {

// Mirrors the CPU body's Window: the window clipped to the image, and the
// average divisor clipped only to the padded input.
struct DeviceWindow {
  int h_begin, h_end, w_begin, w_end;
  int padded_size;
};

__device__ DeviceWindow WindowAt(const PoolingGeometry& g, int ph, int pw) {
  const int h_start = ph * g.stride_h - g.pad_h;
  const int w_start = pw * g.stride_w - g.pad_w;
  const int h_stop = min(h_start + g.kernel_h, g.height + g.pad_h);
  const int w_stop = min(w_start + g.kernel_w, g.width + g.pad_w);
  DeviceWindow window;
  window.padded_size = (h_stop - h_start) * (w_stop - w_start);
  window.h_begin = max(h_start, 0);
  window.w_begin = max(w_start, 0);
  window.h_end = min(h_stop, g.height);
  window.w_end = min(w_stop, g.width);
  return window;
}

// Splits an output index into its plane and its window.
__device__ void OutputPosition(int64_t index, const PoolingGeometry& g, int64_t* plane, int* ph,
                               int* pw) {
  *pw = static_cast<int>(index % g.pooled_width);
  *ph = static_cast<int>((index / g.pooled_width) % g.pooled_height);
  *plane = index / g.pooled_width / g.pooled_height;
}

// The outputs whose windows hold input row (or column) position p (padding
// added): those with start <= p < start + kernel.
__device__ void CoveringOutputs(int position, int kernel, int stride, int pad, int pooled,
                                int* first, int* last_plus_one) {
  const int padded = position + pad;
  *first = padded < kernel ? 0 : (padded - kernel) / stride + 1;
  *last_plus_one = min(padded / stride + 1, pooled);
}

template <typename Dtype>
__global__ void MaxPoolForward(const int64_t n, const Dtype* in, const PoolingGeometry g,
                               Dtype* out, int* selected) {
  CUDA_KERNEL_LOOP(index, n) {
    int64_t plane;
    int ph, pw;
    OutputPosition(index, g, &plane, &ph, &pw);
    const DeviceWindow window = WindowAt(g, ph, pw);
    const Dtype* plane_in = in + plane * g.height * g.width;
    int best = -1;
    for (int h = window.h_begin; h < window.h_end; ++h) {
      for (int w = window.w_begin; w < window.w_end; ++w) {
        const int position = h * g.width + w;
        if (best < 0 || plane_in[position] > plane_in[best]) best = position;
      }
    }
    out[index] = best >= 0 ? plane_in[best] : Dtype(0);
    selected[index] = best;
  }
}

template <typename Dtype>
__global__ void IndexToMask(const int64_t n, const int* selected, Dtype* mask) {
  CUDA_KERNEL_LOOP(index, n) { mask[index] = static_cast<Dtype>(selected[index]); }
}

template <typename Dtype>
__global__ void AvePoolForward(const int64_t n, const Dtype* in, const PoolingGeometry g,
                               Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    int64_t plane;
    int ph, pw;
    OutputPosition(index, g, &plane, &ph, &pw);
    const DeviceWindow window = WindowAt(g, ph, pw);
    const Dtype* plane_in = in + plane * g.height * g.width;
    Dtype sum = 0;
    for (int h = window.h_begin; h < window.h_end; ++h) {
      for (int w = window.w_begin; w < window.w_end; ++w) sum += plane_in[h * g.width + w];
    }
    out[index] = sum / window.padded_size;
  }
}

// Same choice as the CPU body's PickProportional, for the draw u.
template <typename Dtype>
__global__ void StochasticPoolForwardTrain(const int64_t n, const Dtype* in,
                                           const PoolingGeometry g, const Dtype* uniforms,
                                           Dtype* out, int* selected) {
  CUDA_KERNEL_LOOP(index, n) {
    int64_t plane;
    int ph, pw;
    OutputPosition(index, g, &plane, &ph, &pw);
    const DeviceWindow window = WindowAt(g, ph, pw);
    const Dtype* plane_in = in + plane * g.height * g.width;
    int picked = -1;
    if (window.h_begin < window.h_end && window.w_begin < window.w_end) {
      Dtype total = 0;
      for (int h = window.h_begin; h < window.h_end; ++h) {
        for (int w = window.w_begin; w < window.w_end; ++w) total += plane_in[h * g.width + w];
      }
      const Dtype threshold = uniforms[index] * total;
      Dtype cumulative = 0;
      int fallback = window.h_begin * g.width + window.w_begin;
      for (int h = window.h_begin; h < window.h_end && picked < 0; ++h) {
        for (int w = window.w_begin; w < window.w_end; ++w) {
          const int position = h * g.width + w;
          cumulative += plane_in[position];
          if (plane_in[position] > 0) fallback = position;
          if (cumulative > threshold) {
            picked = position;
            break;
          }
        }
      }
      if (picked < 0) picked = fallback;
    }
    out[index] = picked >= 0 ? plane_in[picked] : Dtype(0);
    selected[index] = picked;
  }
}

template <typename Dtype>
__global__ void StochasticPoolForwardTest(const int64_t n, const Dtype* in, const PoolingGeometry g,
                                          Dtype* out) {
  CUDA_KERNEL_LOOP(index, n) {
    int64_t plane;
    int ph, pw;
    OutputPosition(index, g, &plane, &ph, &pw);
    const DeviceWindow window = WindowAt(g, ph, pw);
    const Dtype* plane_in = in + plane * g.height * g.width;
    Dtype sum = 0;
    Dtype sum_of_squares = 0;
    for (int h = window.h_begin; h < window.h_end; ++h) {
      for (int w = window.w_begin; w < window.w_end; ++w) {
        const Dtype value = plane_in[h * g.width + w];
        sum += value;
        sum_of_squares += value * value;
      }
    }
    out[index] = sum > 0 ? sum_of_squares / sum : Dtype(0);
  }
}

// One thread per input element gathers from the outputs whose windows hold it,
// so no two threads write the same place and the sums are deterministic.
template <typename Dtype>
__global__ void SelectedPoolBackward(const int64_t n, const Dtype* top_diff, const int* selected,
                                     const PoolingGeometry g, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int w = static_cast<int>(index % g.width);
    const int h = static_cast<int>((index / g.width) % g.height);
    const int64_t plane = index / g.width / g.height;
    int ph_first, ph_end, pw_first, pw_end;
    CoveringOutputs(h, g.kernel_h, g.stride_h, g.pad_h, g.pooled_height, &ph_first, &ph_end);
    CoveringOutputs(w, g.kernel_w, g.stride_w, g.pad_w, g.pooled_width, &pw_first, &pw_end);
    const int64_t plane_offset = plane * g.pooled_height * g.pooled_width;
    const int position = h * g.width + w;
    Dtype gradient = 0;
    for (int ph = ph_first; ph < ph_end; ++ph) {
      for (int pw = pw_first; pw < pw_end; ++pw) {
        const int64_t out_index = plane_offset + ph * g.pooled_width + pw;
        if (selected[out_index] == position) gradient += top_diff[out_index];
      }
    }
    bottom_diff[index] = gradient;
  }
}

template <typename Dtype>
__global__ void AvePoolBackward(const int64_t n, const Dtype* top_diff, const PoolingGeometry g,
                                Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int w = static_cast<int>(index % g.width);
    const int h = static_cast<int>((index / g.width) % g.height);
    const int64_t plane = index / g.width / g.height;
    int ph_first, ph_end, pw_first, pw_end;
    CoveringOutputs(h, g.kernel_h, g.stride_h, g.pad_h, g.pooled_height, &ph_first, &ph_end);
    CoveringOutputs(w, g.kernel_w, g.stride_w, g.pad_w, g.pooled_width, &pw_first, &pw_end);
    const int64_t plane_offset = plane * g.pooled_height * g.pooled_width;
    Dtype gradient = 0;
    for (int ph = ph_first; ph < ph_end; ++ph) {
      for (int pw = pw_first; pw < pw_end; ++pw) {
        const DeviceWindow window = WindowAt(g, ph, pw);
        gradient += top_diff[plane_offset + ph * g.pooled_width + pw] / window.padded_size;
      }
    }
    bottom_diff[index] = gradient;
  }
}

}  // namespace

template <typename Dtype>
void PoolingLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const int64_t count = top[0]->count();
  const Dtype* in = bottom[0]->gpu_data();
  Dtype* out = top[0]->mutable_gpu_data();
  switch (this->layer_param_.pooling_param().pool()) {
    case PoolingParameter::MAX: {
      int* selected = static_cast<int*>(selected_index_->mutable_gpu_data());
      MaxPoolForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
          count, in, geometry_, out, selected);
      CUDA_POST_KERNEL_CHECK;
      if (top.size() > 1) {
        IndexToMask<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
            count, selected, top[1]->mutable_gpu_data());
        CUDA_POST_KERNEL_CHECK;
      }
      break;
    }
    case PoolingParameter::AVE:
      AvePoolForward<Dtype>
          <<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(count, in, geometry_, out);
      CUDA_POST_KERNEL_CHECK;
      break;
    case PoolingParameter::STOCHASTIC:
      if (this->phase_ == TRAIN) {
        gpu_rng_uniform(uniforms_.count(), Dtype(0), Dtype(1), uniforms_.mutable_gpu_data());
        StochasticPoolForwardTrain<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
            count, in, geometry_, uniforms_.gpu_data(), out,
            static_cast<int*>(selected_index_->mutable_gpu_data()));
      } else {
        StochasticPoolForwardTest<Dtype>
            <<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(count, in, geometry_, out);
      }
      CUDA_POST_KERNEL_CHECK;
      break;
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  const PoolingParameter::PoolMethod pool = this->layer_param_.pooling_param().pool();
  if (pool == PoolingParameter::AVE) {
    AvePoolBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
        count, top_diff, geometry_, bottom_diff);
    CUDA_POST_KERNEL_CHECK;
    return;
  }
  if (pool == PoolingParameter::STOCHASTIC) RequireTrainPhaseForStochasticBackward();
  SelectedPoolBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top_diff, static_cast<const int*>(selected_index_->gpu_data()), geometry_,
      bottom_diff);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(PoolingLayer);

}  // namespace crema
