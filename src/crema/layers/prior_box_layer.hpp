// PriorBox (SSD, weiliu89/caffe): the default boxes of one feature map.
// bottom[0] is the feature map [N, C, H, W], bottom[1] the image
// [N, C, img_H, img_W] (only their shapes are read). The top is
// [1, 2, H * W * num_priors * 4]: channel 0 holds each prior's corners
// (xmin, ymin, xmax, ymax) divided by the image size, channel 1 its four
// variances. Priors are ordered by row h, column w, then min_size s, and for
// each s: the square of side min_size[s], the square of side
// sqrt(min_size[s] * max_size[s]) when max_size is given, then one box per
// aspect ratio r != 1, min_size[s] * sqrt(r) wide and min_size[s] / sqrt(r)
// high. The centre of cell (h, w) is ((w + offset) * step_w,
// (h + offset) * step_h). The top does not depend on the bottoms' values:
// the gradient is zero.
#ifndef CREMA_LAYERS_PRIOR_BOX_LAYER_HPP_
#define CREMA_LAYERS_PRIOR_BOX_LAYER_HPP_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class PriorBoxLayer : public Layer<Dtype> {
 public:
  explicit PriorBoxLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "PriorBox"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return false; }

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
  void ReadSizes();
  void ReadAspectRatios();
  void ReadVariances();
  void ReadImageSizeAndStep();
  // The (width, height) of each prior of one cell, in pixels, in output order.
  std::vector<std::pair<double, double>> CellBoxSizes() const;
  void WriteVariances(int num_boxes, Dtype* variance_data) const;

  std::vector<float> min_sizes_;
  std::vector<float> max_sizes_;
  // 1 first, then each distinct given ratio and, with flip, its inverse.
  std::vector<float> aspect_ratios_;
  std::vector<float> variances_;
  // 0: taken from the bottoms at each forward.
  int img_h_ = 0;
  int img_w_ = 0;
  float step_h_ = 0;
  float step_w_ = 0;
  float offset_ = 0.5;
  int num_priors_ = 0;
  // What the top holds: the priors for these bottom sizes (feature map and
  // image, H and W), written into this memory, whose stamp after the
  // write is this. While all three hold, a pass has nothing to write.
  std::array<int, 4> written_sizes_{};
  std::weak_ptr<SyncedMemory> written_memory_;
  uint64_t written_stamp_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_PRIOR_BOX_LAYER_HPP_
