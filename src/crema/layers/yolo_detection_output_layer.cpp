#include "crema/layers/yolo_detection_output_layer.hpp"

#include <algorithm>
#include <cmath>

namespace crema {

template <typename Dtype>
void YoloDetectionOutputLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                                 const std::vector<Blob<Dtype>*>& top) {
  const YoloDetectionOutputParameter& p = this->layer_param_.yolo_detection_output_param();
  this->ReadCommonSettings(p, "yolo_detection_output_param");
  CREMA_LAYER_REQUIRE(p.coords() == 4,
                      "coords must be 4 (the fork's decoding reads four), got " << p.coords());
  CREMA_LAYER_REQUIRE(p.biases_size() == 2 * this->num_box_,
                      "biases needs a width and a height per "
                      "anchor, "
                          << 2 * this->num_box_ << " values, got " << p.biases_size());
}

template <typename Dtype>
void YoloDetectionOutputLayer<Dtype>::DecodeHead(const Blob<Dtype>& head, int, int n,
                                                 std::vector<yolo::Candidate>* out) const {
  const YoloDetectionOutputParameter& p = this->layer_param_.yolo_detection_output_param();
  const int side = head.shape(3), area = side * side, fields = 5 + this->num_classes_;
  const Dtype* data = head.cpu_data() + head.offset(n);
  std::vector<float> probability(this->num_classes_);
  for (int cell = 0; cell < area; ++cell) {
    const int x = cell % side, y = cell / side;
    for (int b = 0; b < this->num_box_; ++b) {
      const Dtype* field = data + static_cast<size_t>(b) * fields * area + cell;
      float largest = static_cast<float>(field[5 * area]);
      for (int c = 1; c < this->num_classes_; ++c) {
        largest = std::max(largest, static_cast<float>(field[(5 + c) * area]));
      }
      float sum = 0;
      for (int c = 0; c < this->num_classes_; ++c) {
        probability[c] = std::exp(static_cast<float>(field[(5 + c) * area]) - largest);
        sum += probability[c];
      }
      const int best = static_cast<int>(std::max_element(probability.begin(), probability.end()) -
                                        probability.begin());
      yolo::Candidate box;
      box.image = n;
      box.label = best + 1;
      box.confidence = yolo::Sigmoid(field[4 * area]) * probability[best] / sum;
      if (box.confidence < this->confidence_threshold_) continue;
      box.x = (x + yolo::Sigmoid(field[0])) / side;
      box.y = (y + yolo::Sigmoid(field[area])) / side;
      box.w = std::exp(static_cast<float>(field[2 * area])) * p.biases(2 * b) / side;
      box.h = std::exp(static_cast<float>(field[3 * area])) * p.biases(2 * b + 1) / side;
      out->push_back(box);
    }
  }
}

INSTANTIATE_CLASS(YoloDetectionOutputLayer);
REGISTER_LAYER_CLASS(YoloDetectionOutput);

}  // namespace crema
