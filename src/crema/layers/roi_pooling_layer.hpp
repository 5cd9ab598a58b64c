// ROIPooling (py-faster-rcnn, rbgirshick/caffe-fast-rcnn): max pooling of each
// region of interest into pooled_h x pooled_w bins. bottom[0] holds the
// features [N, C, H, W]; bottom[1] the ROIs [R, 5], each row (image index,
// x1, y1, x2, y2) in input pixels. An ROI covers the cells from
// round(x1 * spatial_scale) to round(x2 * spatial_scale) inclusive (likewise
// y); bin (ph, pw) takes the maximum over its cells (see MaxPoolBin), 0 when
// no cell of the map lies in it. Top: [R, C, pooled_h, pooled_w]. The
// gradient of each output goes to the cell it took (summed over outputs);
// the ROIs get none.
#ifndef CREMA_LAYERS_ROI_POOLING_LAYER_HPP_
#define CREMA_LAYERS_ROI_POOLING_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layer.hpp"
#include "crema/syncedmem.hpp"

namespace crema {

// An ROI in feature-map cells: the cells [start_w, start_w + width) x
// [start_h, start_h + height) of image `image`.
struct RoiCells {
  int image;
  int start_w;
  int start_h;
  int width;
  int height;
};

template <typename Dtype>
class ROIPoolingLayer : public Layer<Dtype> {
 public:
  explicit ROIPoolingLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "ROIPooling"; }
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
  // Checks every ROI row and writes its cells into roi_cells_ (host copy).
  void MeasureRois(const Blob<Dtype>& rois);
  // The cells of ROI `row` along one axis: [start, start + size) from the
  // rounded, scaled coordinates; refuses an ROI none of whose `bins` bins
  // holds a cell of the axis' extent.
  void MeasureAxis(Dtype low, Dtype high, int extent, int bins, int row, const char* axis,
                   int* start, int* size) const;

  int pooled_h_ = 0;
  int pooled_w_ = 0;
  Dtype spatial_scale_ = 1;
  int num_images_ = 0;
  int channels_ = 0;
  int height_ = 0;
  int width_ = 0;
  int num_rois_ = 0;
  // One RoiCells per ROI, made by MeasureRois in every Forward.
  std::unique_ptr<SyncedMemory> roi_cells_;
  // The cell (h * W + w) each output took, -1 for an empty bin; for Backward.
  std::unique_ptr<SyncedMemory> argmax_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_ROI_POOLING_LAYER_HPP_
