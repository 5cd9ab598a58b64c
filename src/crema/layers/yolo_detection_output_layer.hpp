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

#include "crema/detection/yolo_detections.hpp"
#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class YoloDetectionOutputLayer : public Layer<Dtype> {
 public:
  explicit YoloDetectionOutputLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "YoloDetectionOutput"; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  void Decode(const Blob<Dtype>& head, int n, std::vector<yolo::Candidate>* out) const;

  int num_classes_ = 0, num_box_ = 0;
  float confidence_threshold_ = 0, nms_threshold_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_YOLO_DETECTION_OUTPUT_LAYER_HPP_
