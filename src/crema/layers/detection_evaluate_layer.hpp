// DetectionEvaluate (SSD, weiliu89/caffe): judges a batch's detections
// against its ground truth, in the fork's output layout, for the test phase
// to sum into mean average precision (ssd::AveragePrecision).
// Bottoms: detections [1, 1, D, 7] (DetectionOutput's rows: image, label,
// score, xmin, ymin, xmax, ymax; label -1 where an image kept nothing) and
// ground truth [1, 1, G, 8] (image, label, instance, xmin, ymin, xmax,
// ymax, difficult). Top [1, 1, C' + D', 5]: first, per class other than the
// background (C' rows), (-1, label, ground truths, -1, -1), difficult ones
// counted only with evaluate_difficult_gt; then per detection (D' rows, by
// image, then label, then descending score) (image, label, score, tp, fp):
// a true positive when its largest Jaccard overlap with a ground truth of
// its label and image is at least overlap_threshold and that ground truth is
// not yet claimed, (0, 0) when that ground truth is difficult and not
// evaluated, else a false positive. Boxes are compared normalised;
// name_size_file and resize_param (the fork's pixel-size evaluation) are
// refused by name. No backward.
#ifndef CREMA_LAYERS_DETECTION_EVALUATE_LAYER_HPP_
#define CREMA_LAYERS_DETECTION_EVALUATE_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class DetectionEvaluateLayer : public Layer<Dtype> {
 public:
  explicit DetectionEvaluateLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "DetectionEvaluate"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

 private:
  int num_classes_ = 0;
  int background_label_ = 0;
  float overlap_threshold_ = 0.5f;
  bool evaluate_difficult_ = true;
};

}  // namespace crema

#endif  // CREMA_LAYERS_DETECTION_EVALUATE_LAYER_HPP_
