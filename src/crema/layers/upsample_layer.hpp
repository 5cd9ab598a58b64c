// Upsample (SegNet, alexgkendall/caffe-segnet): max unpooling. bottom[0] is
// the pooled data [N, C, H, W], bottom[1] the argmax top of the MAX Pooling
// layer that made it (same shape; each value the flat index, stored as a
// float, of the maximum within its [out_h, out_w] plane). The top is zero
// except top[n][c][mask] = data. Output size per axis: upsample_h (upsample_w)
// when given, else H * scale_h - (pad_out_h ? 1 : 0), scale_h and scale_w
// defaulting to scale. The mask takes no gradient.
#ifndef CREMA_LAYERS_UPSAMPLE_LAYER_HPP_
#define CREMA_LAYERS_UPSAMPLE_LAYER_HPP_

#include <cmath>
#include <cstdint>
#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class UpsampleLayer : public Layer<Dtype> {
 public:
  explicit UpsampleLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Upsample"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index == 0; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  // Only the data takes a gradient. A net asks for the mask's too when the
  // pooling layer below it learns; Pooling ignores its mask top's diff, so
  // it is left untouched rather than refused.
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  bool HasExplicitSize() const {
    const UpsampleParameter& param = this->layer_param_.upsample_param();
    return param.has_upsample_h() && param.has_upsample_w();
  }
  // One axis's output size from the bottom's size on it, in int64 so that
  // no size wraps.
  static int64_t OutputSize(int in_size, bool has_explicit, uint32_t explicit_size, uint32_t scale,
                            bool pad_out);
  // Whether a mask value is an integer index inside the output plane.
  bool IsIndexInPlane(Dtype index) const {
    return index >= 0 && index < out_plane_ && std::floor(index) == index;
  }
  // Throws, naming the first bad mask value, if any is not an index inside
  // the output plane.
  void CheckMask(const Blob<Dtype>& mask) const;

  int num_planes_ = 0;  // N * C
  int in_plane_ = 0;    // H * W
  int out_height_ = 0, out_width_ = 0;
  int out_plane_ = 0;
  // The GPU forward pass sets it to 1 when it meets a bad mask value.
  Blob<Dtype> bad_mask_flag_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_UPSAMPLE_LAYER_HPP_
