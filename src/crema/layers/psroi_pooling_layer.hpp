// PSROIPooling (R-FCN, daijifeng001/caffe-rfcn): position-sensitive average
// pooling of each region of interest. bottom[0] holds the score maps
// [N, output_dim * group_size^2, H, W]; bottom[1] the ROIs [R, 5], each row
// (image index, x1, y1, x2, y2) in input pixels. An ROI spans
// [round(x1), round(x2) + 1) * spatial_scale (likewise y, not rounded after
// scaling, at least 0.1 long), cut into group_size x group_size bins (see
// AveragePoolBin). Output (r, c, gh, gw) is the mean of channel
// (c * group_size + gh) * group_size + gw over bin (gh, gw), 0 when no cell of
// the map lies in it. Top: [R, output_dim, group_size, group_size]. The
// gradient of each output is spread evenly over its bin's cells; the ROIs get
// none.
#ifndef CREMA_LAYERS_PSROI_POOLING_LAYER_HPP_
#define CREMA_LAYERS_PSROI_POOLING_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class PSROIPoolingLayer : public Layer<Dtype> {
 public:
  explicit PSROIPoolingLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "PSROIPooling"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  // The ROIs' coordinates get no gradient.
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
  // Checks every ROI row and writes its extent into roi_extents_ (host copy).
  void MeasureRois(const Blob<Dtype>& rois);
  // One axis of ROI `row`: where it starts and how long it is, in cells;
  // refuses an ROI that misses the axis' extent.
  void MeasureAxis(Dtype low, Dtype high, int extent, int row, const char* axis, Dtype* start,
                   Dtype* size) const;

  Dtype spatial_scale_ = 1;
  int output_dim_ = 0;
  int group_size_ = 0;
  int num_images_ = 0;
  int height_ = 0;
  int width_ = 0;
  int num_rois_ = 0;
  // [R, 5]: image index, start_w, start_h, width, height of each ROI in
  // cells, made by MeasureRois in every Forward.
  Blob<Dtype> roi_extents_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_PSROI_POOLING_LAYER_HPP_
