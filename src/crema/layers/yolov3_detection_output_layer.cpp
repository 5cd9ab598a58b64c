#include "crema/layers/yolov3_detection_output_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void Yolov3DetectionOutputLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                                   const std::vector<Blob<Dtype>*>& top) {
  const Yolov3DetectionOutputParameter& p = this->layer_param_.yolov3_detection_output_param();
  this->ReadCommonSettings(p, "yolov3_detection_output_param");
  const int num_box = this->num_box_;
  CREMA_LAYER_REQUIRE(static_cast<int>(p.mask_group_num()) == static_cast<int>(bottom.size()),
                      "mask_group_num " << p.mask_group_num() << " must equal the number of "
                                        << "bottoms (one per scale), " << bottom.size());
  CREMA_LAYER_REQUIRE(p.mask_size() == num_box * static_cast<int>(bottom.size()),
                      "mask needs num_box anchors per scale, " << num_box * bottom.size()
                                                               << " values, got " << p.mask_size());
  CREMA_LAYER_REQUIRE(p.anchors_scale_size() == static_cast<int>(bottom.size()),
                      "anchors_scale needs one stride per scale, "
                          << bottom.size() << " values, got " << p.anchors_scale_size());
  for (int i = 0; i < p.anchors_scale_size(); ++i) {
    CREMA_LAYER_REQUIRE(p.anchors_scale(i) > 0, "anchors_scale " << i << " is 0");
  }
  for (int i = 0; i < p.mask_size(); ++i) {
    CREMA_LAYER_REQUIRE(2 * static_cast<int64_t>(p.mask(i)) + 1 < p.biases_size(),
                        "mask value " << p.mask(i) << " names an anchor past the "
                                      << p.biases_size() / 2 << " that biases hold");
  }
}

template <typename Dtype>
void Yolov3DetectionOutputLayer<Dtype>::DecodeHead(const Blob<Dtype>& head, int t, int n,
                                                   std::vector<yolo::Candidate>* out) const {
  const Yolov3DetectionOutputParameter& p = this->layer_param_.yolov3_detection_output_param();
  const int side = head.shape(3), area = side * side, fields = 5 + this->num_classes_;
  const float input_size = static_cast<float>(side) * p.anchors_scale(t);
  const Dtype* data = head.cpu_data() + head.offset(n);
  for (int cell = 0; cell < area; ++cell) {
    const int x = cell % side, y = cell / side;
    for (int b = 0; b < this->num_box_; ++b) {
      const Dtype* field = data + static_cast<size_t>(b) * fields * area + cell;
      const int anchor = static_cast<int>(p.mask(t * this->num_box_ + b));
      yolo::Candidate box;
      box.image = n;
      box.x = (x + yolo::Sigmoid(field[0])) / side;
      box.y = (y + yolo::Sigmoid(field[area])) / side;
      box.w = std::exp(static_cast<float>(field[2 * area])) * p.biases(2 * anchor) / input_size;
      box.h = std::exp(static_cast<float>(field[3 * area])) * p.biases(2 * anchor + 1) / input_size;
      const float objectness = yolo::Sigmoid(field[4 * area]);
      for (int c = 0; c < this->num_classes_; ++c) {
        box.confidence = yolo::Sigmoid(field[(5 + c) * area]) * objectness;
        box.label = c + 1;
        if (box.confidence > this->confidence_threshold_) out->push_back(box);
      }
    }
  }
}

INSTANTIATE_CLASS(Yolov3DetectionOutputLayer);
REGISTER_LAYER_CLASS(Yolov3DetectionOutput);

}  // namespace crema
