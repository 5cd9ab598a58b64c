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

#include "crema/detection/yolo_detections.hpp"
#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class Yolov3DetectionOutputLayer : public Layer<Dtype> {
 public:
  explicit Yolov3DetectionOutputLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Yolov3DetectionOutput"; }
  int MinBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // Appends scale t's candidates of image n.
  void Decode(const Blob<Dtype>& head, int t, int n, std::vector<yolo::Candidate>* out) const;

  int num_classes_ = 0, num_box_ = 0;
  float confidence_threshold_ = 0, nms_threshold_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_YOLOV3_DETECTION_OUTPUT_LAYER_HPP_
