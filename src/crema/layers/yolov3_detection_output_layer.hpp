// Yolov3DetectionOutput (eric612/MobileNet-YOLO, yolov3_detection_output_param):
// YOLOv3's heads to detections, forward only. One bottom per scale
// (mask_group_num of them), each [N, num_box (5 + num_classes), S, S],
// anchor-major: anchor n's channels n (5 + K) + (tx, ty, tw, th, objectness,
// K class logits). Anchor n of scale t is biases pair mask[t * num_box + n]
// (in input pixels); anchors_scale[t] is that scale's stride. Per cell
// (x, y) and anchor: centre ((x + sig(tx)) / S, (y + sig(ty)) / S), size
// exp(tw) w_a / (S stride), exp(th) h_a / (S stride), and for every class c
// whose sig(logit_c) sig(objectness) exceeds confidence_threshold, one
// candidate of that confidence. Then yolo::Select (class-agnostic NMS) and
// DetectionOutput's rows, label = class + 1. The fork runs the NMS over the
// whole batch and writes image 0 on every row; Crema keeps images apart (one
// image: the same rows).
#ifndef CREMA_LAYERS_YOLOV3_DETECTION_OUTPUT_LAYER_HPP_
#define CREMA_LAYERS_YOLOV3_DETECTION_OUTPUT_LAYER_HPP_

#include <vector>

#include "crema/layers/yolo_detection_base_layer.hpp"

namespace crema {

template <typename Dtype>
class Yolov3DetectionOutputLayer : public YoloDetectionBaseLayer<Dtype> {
 public:
  explicit Yolov3DetectionOutputLayer(const LayerParameter& param)
      : YoloDetectionBaseLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Yolov3DetectionOutput"; }
  int MinBottomBlobs() const override { return 1; }

 protected:
  // Scale t's candidates of image n.
  void DecodeHead(const Blob<Dtype>& head, int t, int n,
                  std::vector<yolo::Candidate>* out) const override;
};

}  // namespace crema

#endif  // CREMA_LAYERS_YOLOV3_DETECTION_OUTPUT_LAYER_HPP_
