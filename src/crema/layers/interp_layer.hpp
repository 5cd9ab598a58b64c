// Interp (DeepLab v2, PSPNet): resizes each [H, W] plane bilinearly with the
// corners aligned. The input is first cropped by -pad_beg rows and columns at
// the start and -pad_end at the end (the fork allows only pad_beg, pad_end <=
// 0). The output size comes from, in this order: a second bottom (its H, W);
// shrink_factor s and/or zoom_factor z (shrink first, out = (in - 1) / s + 1,
// then zoom, out = in + (in - 1) * (z - 1)); height and width. Output index t
// of an axis samples the cropped input at t * (in - 1) / (out - 1), or at 0
// when out == 1. The second bottom takes no gradient.
#ifndef CREMA_LAYERS_INTERP_LAYER_HPP_
#define CREMA_LAYERS_INTERP_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

#ifdef __CUDACC__
#define CREMA_INTERP_HOST_DEVICE __host__ __device__
#else
#define CREMA_INTERP_HOST_DEVICE
#endif

namespace crema {

// Where output index t of one axis samples the input: between input indices
// lo and lo + step (step is 0 at the last input), with weight frac on the
// second and 1 - frac on the first. ratio is (in - 1) / (out - 1), or 0.
template <typename Dtype>
struct InterpTap {
  int lo;
  int step;
  Dtype frac;
};

template <typename Dtype>
CREMA_INTERP_HOST_DEVICE inline InterpTap<Dtype> InterpTapAt(int t, Dtype ratio, int in_size) {
  const Dtype position = ratio * t;
  InterpTap<Dtype> tap;
  tap.lo = static_cast<int>(position);
  if (tap.lo > in_size - 1) tap.lo = in_size - 1;
  tap.step = tap.lo < in_size - 1 ? 1 : 0;
  tap.frac = position - tap.lo;
  return tap;
}

// The ratio of input to output steps on an axis with corners aligned.
template <typename Dtype>
CREMA_INTERP_HOST_DEVICE inline Dtype InterpRatio(int in_size, int out_size) {
  return out_size > 1 ? static_cast<Dtype>(in_size - 1) / (out_size - 1) : Dtype(0);
}

template <typename Dtype>
class InterpLayer : public Layer<Dtype> {
 public:
  explicit InterpLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Interp"; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  // The second bottom gives only its size.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index == 0; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // The output size of one axis from the cropped input size and the
  // parameters (without a second bottom); in int64 so that no size wraps.
  int64_t OutputSizeFromParameters(int in_size, int64_t explicit_size) const;
  // Offset of the first cropped input element in a bottom plane.
  int CropOffset() const { return crop_begin_ * in_width_ + crop_begin_; }

  int crop_begin_ = 0;  // -pad_beg
  int crop_end_ = 0;    // -pad_end
  int num_planes_ = 0;  // N * C
  // The bottom's plane, the cropped part of it that is resized, the output.
  int in_height_ = 0, in_width_ = 0;
  int cropped_height_ = 0, cropped_width_ = 0;
  int out_height_ = 0, out_width_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_INTERP_LAYER_HPP_
