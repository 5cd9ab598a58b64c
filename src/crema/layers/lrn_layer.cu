#include "crema/layers/lrn_layer.hpp"

namespace crema {

namespace {

struct LRNGeometry {
  int channels, height, width;
  int half_size;
  bool across_channels;
};

// Element terms summed over a window, as functors: plain device lambdas would
// need nvcc's extended-lambda flag.
template <typename Dtype>
struct SquareTerm {
  const Dtype* x;
  __device__ Dtype operator()(int64_t i) const { return x[i] * x[i]; }
};

template <typename Dtype>
struct GradientRatioTerm {
  const Dtype* top_diff;
  const Dtype* top_data;
  const Dtype* scale;
  __device__ Dtype operator()(int64_t i) const { return top_diff[i] * top_data[i] / scale[i]; }
};

// Sum of term over the window centred on element index (zero padded), in
// the same order as the CPU body.
template <typename Dtype, typename Term>
__device__ Dtype WindowSum(int64_t index, const LRNGeometry& g, const Term& term) {
  const int plane_size = g.height * g.width;
  const int w = static_cast<int>(index % g.width);
  const int h = static_cast<int>((index / g.width) % g.height);
  const int c = static_cast<int>((index / plane_size) % g.channels);
  Dtype sum = 0;
  if (g.across_channels) {
    const int64_t channel_zero = index - static_cast<int64_t>(c) * plane_size;
    const int first = max(c - g.half_size, 0);
    const int last = min(c + g.half_size, g.channels - 1);
    for (int other = first; other <= last; ++other) {
      sum += term(channel_zero + static_cast<int64_t>(other) * plane_size);
    }
    return sum;
  }
  const int64_t plane_start = index - (static_cast<int64_t>(h) * g.width + w);
  for (int y = max(h - g.half_size, 0); y <= min(h + g.half_size, g.height - 1); ++y) {
    for (int x = max(w - g.half_size, 0); x <= min(w + g.half_size, g.width - 1); ++x) {
      sum += term(plane_start + static_cast<int64_t>(y) * g.width + x);
    }
  }
  return sum;
}

template <typename Dtype>
__global__ void LRNForward(const int64_t n, const Dtype* bottom_data, const LRNGeometry g,
                           Dtype offset, Dtype window_alpha, Dtype beta, Dtype* scale,
                           Dtype* top_data) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype s =
        offset + window_alpha * WindowSum<Dtype>(index, g, SquareTerm<Dtype>{bottom_data});
    scale[index] = s;
    top_data[index] = bottom_data[index] * pow(s, -beta);
  }
}

template <typename Dtype>
__global__ void LRNBackward(const int64_t n, const Dtype* bottom_data, const Dtype* top_data,
                            const Dtype* top_diff, const Dtype* scale, const LRNGeometry g,
                            Dtype gradient_factor, Dtype beta, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype ratio_sum =
        WindowSum<Dtype>(index, g, GradientRatioTerm<Dtype>{top_diff, top_data, scale});
    bottom_diff[index] = top_diff[index] * pow(scale[index], -beta) +
                         gradient_factor * bottom_data[index] * ratio_sum;
  }
}

}  // namespace

template <typename Dtype>
void LRNLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const int64_t count = bottom[0]->count();
  const LRNGeometry geometry{channels_, height_, width_, half_size_, across_channels()};
  LRNForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), geometry, offset_, window_alpha_, beta_,
      scale_.mutable_gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void LRNLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  const LRNGeometry geometry{channels_, height_, width_, half_size_, across_channels()};
  LRNBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->gpu_data(), top[0]->gpu_diff(), scale_.gpu_data(),
      geometry, Dtype(-2) * window_alpha_ * beta_, beta_, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(LRNLayer);

}  // namespace crema
