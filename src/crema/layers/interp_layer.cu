#include "crema/layers/interp_layer.hpp"

namespace crema {

// The sizes one kernel needs: the bottom plane, the cropped part of it that
// is resized (starting at crop_offset within the plane), the output plane.
struct InterpShape {
  int in_height, in_width, crop_offset;
  int cropped_height, cropped_width;
  int out_height, out_width;
};

// One thread per output element.
template <typename Dtype>
__global__ void InterpForward(const int64_t n, InterpShape s, Dtype ratio_h, Dtype ratio_w,
                              const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(index, n) {
    const int w = index % s.out_width;
    const int h = (index / s.out_width) % s.out_height;
    const int64_t plane = index / s.out_width / s.out_height;
    const Dtype* in = bottom_data + plane * s.in_height * s.in_width + s.crop_offset;
    const InterpTap<Dtype> th = InterpTapAt(h, ratio_h, s.cropped_height);
    const InterpTap<Dtype> tw = InterpTapAt(w, ratio_w, s.cropped_width);
    const Dtype* row0 = in + th.lo * s.in_width;
    const Dtype* row1 = row0 + th.step * s.in_width;
    const Dtype top_row = (1 - tw.frac) * row0[tw.lo] + tw.frac * row0[tw.lo + tw.step];
    const Dtype bottom_row = (1 - tw.frac) * row1[tw.lo] + tw.frac * row1[tw.lo + tw.step];
    top_data[index] = (1 - th.frac) * top_row + th.frac * bottom_row;
  }
}

template <typename Dtype>
void InterpLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  const InterpShape shape{in_height_,     in_width_,   CropOffset(), cropped_height_,
                          cropped_width_, out_height_, out_width_};
  const int64_t count = top[0]->count();
  InterpForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, shape, InterpRatio<Dtype>(cropped_height_, out_height_),
      InterpRatio<Dtype>(cropped_width_, out_width_), bottom[0]->gpu_data(),
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

// The first output index of an axis whose taps reach input b: the outputs'
// taps move monotonically along the input, so a guess from the ratio is
// corrected by walking with the exact tap rule.
template <typename Dtype>
__device__ int FirstOutputReaching(int b, Dtype ratio, int in_size, int out_size) {
  int t = 0;
  if (ratio > 0) {
    const Dtype guess = (b - 1) / ratio - 1;
    t = guess <= 0 ? 0 : (guess >= out_size - 1 ? out_size - 1 : static_cast<int>(guess));
  }
  while (t > 0) {
    const InterpTap<Dtype> before = InterpTapAt(t - 1, ratio, in_size);
    if (before.lo + before.step < b) break;
    --t;
  }
  while (t < out_size) {
    const InterpTap<Dtype> tap = InterpTapAt(t, ratio, in_size);
    if (tap.lo + tap.step >= b) break;
    ++t;
  }
  return t;
}

// The weight with which output t of an axis reads input b.
template <typename Dtype>
__device__ Dtype TapWeight(const InterpTap<Dtype>& tap, int b) {
  return (tap.lo == b ? 1 - tap.frac : Dtype(0)) + (tap.lo + tap.step == b ? tap.frac : Dtype(0));
}

// One thread per bottom element: it gathers the gradient of every output
// whose taps reach it (no atomics, so the sum's order is fixed).
template <typename Dtype>
__global__ void InterpBackward(const int64_t n, InterpShape s, Dtype ratio_h, Dtype ratio_w,
                               int crop_begin, const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int bw = index % s.in_width - crop_begin;
    const int bh = (index / s.in_width) % s.in_height - crop_begin;
    const int64_t plane = index / s.in_width / s.in_height;
    Dtype sum = 0;
    if (bh >= 0 && bh < s.cropped_height && bw >= 0 && bw < s.cropped_width) {
      const Dtype* out = top_diff + plane * s.out_height * s.out_width;
      const int first_w = FirstOutputReaching(bw, ratio_w, s.cropped_width, s.out_width);
      for (int h = FirstOutputReaching(bh, ratio_h, s.cropped_height, s.out_height);
           h < s.out_height; ++h) {
        const InterpTap<Dtype> th = InterpTapAt(h, ratio_h, s.cropped_height);
        if (th.lo > bh) break;
        const Dtype weight_h = TapWeight(th, bh);
        for (int w = first_w; w < s.out_width; ++w) {
          const InterpTap<Dtype> tw = InterpTapAt(w, ratio_w, s.cropped_width);
          if (tw.lo > bw) break;
          sum += weight_h * TapWeight(tw, bw) * out[h * s.out_width + w];
        }
      }
    }
    bottom_diff[index] = sum;
  }
}

template <typename Dtype>
void InterpLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const InterpShape shape{in_height_,     in_width_,   CropOffset(), cropped_height_,
                          cropped_width_, out_height_, out_width_};
  const int64_t count = bottom[0]->count();
  InterpBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, shape, InterpRatio<Dtype>(cropped_height_, out_height_),
      InterpRatio<Dtype>(cropped_width_, out_width_), crop_begin_, top[0]->gpu_diff(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(InterpLayer);

}  // namespace crema
