// YoloDetectionOutput (eric612/MobileNet-YOLO, yolo_detection_output_param):
// YOLOv2's head to detections, forward only. bottom[0] (and an optional
// bottom[1], decoded alike with the same anchors) is [N, num_box (coords + 1
// + num_classes), S, S], anchor-major as Yolov3DetectionOutput's. Anchor n is
// biases pair n, in grid cells. Per cell (x, y) and anchor: centre ((x +
// sig(tx)) / S, (y + sig(ty)) / S), size exp(tw) w_n / S, exp(th) h_n / S;
// the class is the softmax's argmax over the logits (the first of equal
// maxima), the confidence sig(objectness) times its probability, one
// candidate where it reaches confidence_threshold. Then yolo::Select and
// DetectionOutput's rows, as Yolov3DetectionOutput (the fork, too, runs NMS
// over the batch with image 0 on every row). label_map_file names classes
// for the fork's logs; Crema ignores it.
#ifndef CREMA_LAYERS_YOLO_DETECTION_OUTPUT_LAYER_HPP_
#define CREMA_LAYERS_YOLO_DETECTION_OUTPUT_LAYER_HPP_

#include <vector>

#include "crema/layers/yolo_detection_base_layer.hpp"

namespace crema {

template <typename Dtype>
class YoloDetectionOutputLayer : public YoloDetectionBaseLayer<Dtype> {
 public:
  explicit YoloDetectionOutputLayer(const LayerParameter& param)
      : YoloDetectionBaseLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "YoloDetectionOutput"; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }

 protected:
  // Every head is decoded alike, with the same anchors.
  void DecodeHead(const Blob<Dtype>& head, int head_index, int n,
                  std::vector<yolo::Candidate>* out) const override;
};

}  // namespace crema

#endif  // CREMA_LAYERS_YOLO_DETECTION_OUTPUT_LAYER_HPP_
