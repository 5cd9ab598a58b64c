#include "crema/layers/yolo_detection_output_layer.hpp"

#include <algorithm>
#include <cmath>

namespace crema {

template <typename Dtype>
void YoloDetectionOutputLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                                 const std::vector<Blob<Dtype>*>& top) {
  const YoloDetectionOutputParameter& p = this->layer_param_.yolo_detection_output_param();
  CREMA_LAYER_REQUIRE(p.has_num_classes() && p.num_classes() >= 1 && p.num_classes() <= 100000,
                      "needs yolo_detection_output_param.num_classes (the fork has it required), "
                      "of at least 1");
  num_classes_ = static_cast<int>(p.num_classes());
  CREMA_LAYER_REQUIRE(p.num_box() >= 1 && p.num_box() <= 1000,
                      "num_box must lie in [1, 1000], got " << p.num_box());
  num_box_ = static_cast<int>(p.num_box());
  CREMA_LAYER_REQUIRE(p.coords() == 4, "coords must be 4 (the fork's decoding reads four), got "
                                           << p.coords());
  CREMA_LAYER_REQUIRE(p.biases_size() == 2 * num_box_, "biases needs a width and a height per "
                                                       "anchor, "
                                                           << 2 * num_box_ << " values, got "
                                                           << p.biases_size());
  confidence_threshold_ = p.confidence_threshold();
  nms_threshold_ = p.nms_threshold();
  CREMA_LAYER_REQUIRE(std::isfinite(confidence_threshold_), "confidence_threshold must be finite");
  CREMA_LAYER_REQUIRE(nms_threshold_ >= 0 && nms_threshold_ <= 1,
                      "nms_threshold must lie in [0, 1], got " << nms_threshold_);
}

template <typename Dtype>
void YoloDetectionOutputLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  const int channels = num_box_ * (5 + num_classes_);
  for (size_t t = 0; t < bottom.size(); ++t) {
    const Blob<Dtype>& head = *bottom[t];
    CREMA_LAYER_REQUIRE(head.num_axes() == 4 && head.shape(1) == channels &&
                            head.shape(2) == head.shape(3) && head.shape(0) == bottom[0]->shape(0),
                        "bottom " << t << " of shape " << head.shape_string()
                                  << " must be [N, num_box (5 + num_classes) = " << channels
                                  << ", S, S], square (the fork reads the width as the grid), "
                                     "with the batch of bottom 0");
  }
  top[0]->Reshape({1, 1, 1, 7});
}

template <typename Dtype>
void YoloDetectionOutputLayer<Dtype>::Decode(const Blob<Dtype>& head, int n,
                                             std::vector<yolo::Candidate>* out) const {
  const YoloDetectionOutputParameter& p = this->layer_param_.yolo_detection_output_param();
  const int side = head.shape(3), area = side * side, fields = 5 + num_classes_;
  const Dtype* data = head.cpu_data() + head.offset(n);
  std::vector<float> probability(num_classes_);
  for (int cell = 0; cell < area; ++cell) {
    const int x = cell % side, y = cell / side;
    for (int b = 0; b < num_box_; ++b) {
      const Dtype* field = data + static_cast<size_t>(b) * fields * area + cell;
      float largest = static_cast<float>(field[5 * area]);
      for (int c = 1; c < num_classes_; ++c) {
        largest = std::max(largest, static_cast<float>(field[(5 + c) * area]));
      }
      float sum = 0;
      for (int c = 0; c < num_classes_; ++c) {
        probability[c] = std::exp(static_cast<float>(field[(5 + c) * area]) - largest);
        sum += probability[c];
      }
      const int best = static_cast<int>(
          std::max_element(probability.begin(), probability.end()) - probability.begin());
      yolo::Candidate box;
      box.image = n;
      box.label = best + 1;
      box.confidence = yolo::Sigmoid(field[4 * area]) * probability[best] / sum;
      if (box.confidence < confidence_threshold_) continue;
      box.x = (x + yolo::Sigmoid(field[0])) / side;
      box.y = (y + yolo::Sigmoid(field[area])) / side;
      box.w = std::exp(static_cast<float>(field[2 * area])) * p.biases(2 * b) / side;
      box.h = std::exp(static_cast<float>(field[3 * area])) * p.biases(2 * b + 1) / side;
      out->push_back(box);
    }
  }
}

template <typename Dtype>
void YoloDetectionOutputLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                  const std::vector<Blob<Dtype>*>& top) {
  std::vector<yolo::Candidate> candidates;
  const int images = bottom[0]->shape(0);
  for (int n = 0; n < images; ++n) {
    for (const Blob<Dtype>* head : bottom) Decode(*head, n, &candidates);
  }
  yolo::WriteRows(yolo::Select(std::move(candidates), nms_threshold_), images, top[0]);
}

template <typename Dtype>
void YoloDetectionOutputLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                   const std::vector<bool>& propagate_down,
                                                   const std::vector<Blob<Dtype>*>& bottom) {
  for (bool down : propagate_down) {
    CREMA_LAYER_REQUIRE(!down, "has no backward pass (it is for inference only)");
  }
}

INSTANTIATE_CLASS(YoloDetectionOutputLayer);
REGISTER_LAYER_CLASS(YoloDetectionOutput);

}  // namespace crema
