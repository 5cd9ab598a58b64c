// What the YOLO forks' two detection outputs (YoloDetectionOutput,
// Yolov3DetectionOutput) share: the settings both messages name alike, the
// heads' shape ([N, num_box (5 + num_classes), S, S], square: the forks read
// the width as the grid), the pass that decodes every head of every image
// (DecodeHead, each layer's own) and selects (yolo::Select), and no backward.
#ifndef CREMA_LAYERS_YOLO_DETECTION_BASE_LAYER_HPP_
#define CREMA_LAYERS_YOLO_DETECTION_BASE_LAYER_HPP_

#include <cmath>
#include <vector>

#include "crema/detection/yolo_detections.hpp"
#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class YoloDetectionBaseLayer : public Layer<Dtype> {
 public:
  explicit YoloDetectionBaseLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  // num_classes (required, as in the forks), num_box and the thresholds.
  template <typename Param>
  void ReadCommonSettings(const Param& param, const char* field);
  // Appends head `head_index`'s candidates of image n.
  virtual void DecodeHead(const Blob<Dtype>& head, int head_index, int n,
                          std::vector<yolo::Candidate>* out) const = 0;
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  int num_classes_ = 0, num_box_ = 0;
  float confidence_threshold_ = 0, nms_threshold_ = 0;
};

template <typename Dtype>
template <typename Param>
void YoloDetectionBaseLayer<Dtype>::ReadCommonSettings(const Param& p, const char* field) {
  CREMA_LAYER_REQUIRE(p.has_num_classes() && p.num_classes() >= 1 && p.num_classes() <= 100000,
                      "needs " << field
                               << ".num_classes (the fork has it required), of at "
                                  "least 1");
  num_classes_ = static_cast<int>(p.num_classes());
  CREMA_LAYER_REQUIRE(p.num_box() >= 1 && p.num_box() <= 1000,
                      "num_box must lie in [1, 1000], got " << p.num_box());
  num_box_ = static_cast<int>(p.num_box());
  confidence_threshold_ = p.confidence_threshold();
  nms_threshold_ = p.nms_threshold();
  CREMA_LAYER_REQUIRE(std::isfinite(confidence_threshold_), "confidence_threshold must be finite");
  CREMA_LAYER_REQUIRE(nms_threshold_ >= 0 && nms_threshold_ <= 1,
                      "nms_threshold must lie in [0, 1], got " << nms_threshold_);
}

}  // namespace crema

#endif  // CREMA_LAYERS_YOLO_DETECTION_BASE_LAYER_HPP_
