// BoxAnnotatorOHEM (R-FCN's online hard example mining, daijifeng001/caffe-rfcn
// and py-R-FCN): keeps, per image, the roi_per_img regions of interest with
// the largest loss and hides the others from the losses that follow.
// Bottoms: the ROIs [R, 5, (H, W)], each (image index, x1, y1, x2, y2); each
// ROI's loss (R x H x W values, e.g. SoftmaxWithLoss's third top plus
// SmoothL1Loss's second); its label (R x H x W values); its box-regression
// weights [R, C, (H, W)]. Tops: the labels [R, 1, H, W], ignore_label where
// the ROI is not kept; the weights [R, C, H, W], 0 where it is not kept.
// ROIs are taken in order of falling loss (equal losses: the earlier ROI
// first), each kept while its image has fewer than roi_per_img kept. The
// selection has no gradient: the bottoms get zeros. Sorting is sequential,
// so GPU mode runs this CPU body, as the fork does.
#ifndef CREMA_LAYERS_BOX_ANNOTATOR_OHEM_LAYER_HPP_
#define CREMA_LAYERS_BOX_ANNOTATOR_OHEM_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class BoxAnnotatorOHEMLayer : public Layer<Dtype> {
 public:
  explicit BoxAnnotatorOHEMLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "BoxAnnotatorOHEM"; }
  int ExactNumBottomBlobs() const override { return 4; }
  int ExactNumTopBlobs() const override { return 2; }
  bool AllowForceBackward(int bottom_index) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // ROI entries (ROI, position) in the order they are considered: by falling
  // loss, equal losses in index order.
  std::vector<int> ByFallingLoss(const Blob<Dtype>& losses) const;
  // The image index of entry `index`; one that is not a whole number >= 0 is
  // a user error naming the ROI.
  int ImageOf(const Dtype* rois, int index) const;
  // A bottom that must hold one value per ROI entry.
  void RequirePerEntry(const Blob<Dtype>& blob, int bottom_index, const char* what) const;

  int roi_per_img_ = 0;
  int ignore_label_ = -1;
  int num_rois_ = 0;
  int spatial_ = 1;  // positions per ROI (H x W; 1 for [R, 5] ROIs)
  int weight_channels_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_BOX_ANNOTATOR_OHEM_LAYER_HPP_
