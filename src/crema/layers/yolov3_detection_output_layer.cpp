#include "crema/layers/yolov3_detection_output_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void Yolov3DetectionOutputLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                                   const std::vector<Blob<Dtype>*>& top) {
  const Yolov3DetectionOutputParameter& p = this->layer_param_.yolov3_detection_output_param();
  CREMA_LAYER_REQUIRE(p.has_num_classes() && p.num_classes() >= 1 && p.num_classes() <= 100000,
                      "needs yolov3_detection_output_param.num_classes (the fork has it "
                      "required), of at least 1");
  num_classes_ = static_cast<int>(p.num_classes());
  CREMA_LAYER_REQUIRE(p.num_box() >= 1 && p.num_box() <= 1000,
                      "num_box must lie in [1, 1000], got " << p.num_box());
  num_box_ = static_cast<int>(p.num_box());
  CREMA_LAYER_REQUIRE(static_cast<int>(p.mask_group_num()) == static_cast<int>(bottom.size()),
                      "mask_group_num " << p.mask_group_num() << " must equal the number of "
                                        << "bottoms (one per scale), " << bottom.size());
  CREMA_LAYER_REQUIRE(p.mask_size() == num_box_ * static_cast<int>(bottom.size()),
                      "mask needs num_box anchors per scale, " << num_box_ * bottom.size()
                                                               << " values, got " << p.mask_size());
  CREMA_LAYER_REQUIRE(p.anchors_scale_size() == static_cast<int>(bottom.size()),
                      "anchors_scale needs one stride per scale, " << bottom.size()
                                                                   << " values, got "
                                                                   << p.anchors_scale_size());
  for (int i = 0; i < p.anchors_scale_size(); ++i) {
    CREMA_LAYER_REQUIRE(p.anchors_scale(i) > 0, "anchors_scale " << i << " is 0");
  }
  for (int i = 0; i < p.mask_size(); ++i) {
    CREMA_LAYER_REQUIRE(2 * static_cast<int64_t>(p.mask(i)) + 1 < p.biases_size(),
                        "mask value " << p.mask(i) << " names an anchor past the "
                                      << p.biases_size() / 2 << " that biases hold");
  }
  confidence_threshold_ = p.confidence_threshold();
  nms_threshold_ = p.nms_threshold();
  CREMA_LAYER_REQUIRE(std::isfinite(confidence_threshold_), "confidence_threshold must be finite");
  CREMA_LAYER_REQUIRE(nms_threshold_ >= 0 && nms_threshold_ <= 1,
                      "nms_threshold must lie in [0, 1], got " << nms_threshold_);
}

template <typename Dtype>
void Yolov3DetectionOutputLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
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
  top[0]->Reshape({1, 1, 1, 7});  // the number of detections is known after forward
}

template <typename Dtype>
void Yolov3DetectionOutputLayer<Dtype>::Decode(const Blob<Dtype>& head, int t, int n,
                                               std::vector<yolo::Candidate>* out) const {
  const Yolov3DetectionOutputParameter& p = this->layer_param_.yolov3_detection_output_param();
  const int side = head.shape(3), area = side * side, fields = 5 + num_classes_;
  const float input_size = static_cast<float>(side) * p.anchors_scale(t);
  const Dtype* data = head.cpu_data() + head.offset(n);
  for (int cell = 0; cell < area; ++cell) {
    const int x = cell % side, y = cell / side;
    for (int b = 0; b < num_box_; ++b) {
      const Dtype* field = data + static_cast<size_t>(b) * fields * area + cell;
      const int anchor = static_cast<int>(p.mask(t * num_box_ + b));
      yolo::Candidate box;
      box.image = n;
      box.x = (x + yolo::Sigmoid(field[0])) / side;
      box.y = (y + yolo::Sigmoid(field[area])) / side;
      box.w = std::exp(static_cast<float>(field[2 * area])) * p.biases(2 * anchor) / input_size;
      box.h = std::exp(static_cast<float>(field[3 * area])) * p.biases(2 * anchor + 1) / input_size;
      const float objectness = yolo::Sigmoid(field[4 * area]);
      for (int c = 0; c < num_classes_; ++c) {
        box.confidence = yolo::Sigmoid(field[(5 + c) * area]) * objectness;
        box.label = c + 1;
        if (box.confidence > confidence_threshold_) out->push_back(box);
      }
    }
  }
}

template <typename Dtype>
void Yolov3DetectionOutputLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                    const std::vector<Blob<Dtype>*>& top) {
  std::vector<yolo::Candidate> candidates;
  const int images = bottom[0]->shape(0);
  for (int n = 0; n < images; ++n) {
    for (size_t t = 0; t < bottom.size(); ++t) {
      Decode(*bottom[t], static_cast<int>(t), n, &candidates);
    }
  }
  yolo::WriteRows(yolo::Select(std::move(candidates), nms_threshold_), images, top[0]);
}

template <typename Dtype>
void Yolov3DetectionOutputLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                     const std::vector<bool>& propagate_down,
                                                     const std::vector<Blob<Dtype>*>& bottom) {
  for (bool down : propagate_down) {
    CREMA_LAYER_REQUIRE(!down, "has no backward pass (it is for inference only)");
  }
}

INSTANTIATE_CLASS(Yolov3DetectionOutputLayer);
REGISTER_LAYER_CLASS(Yolov3DetectionOutput);

}  // namespace crema
