#include "crema/layers/yolo_detection_base_layer.hpp"

namespace crema {

template <typename Dtype>
void YoloDetectionBaseLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
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
void YoloDetectionBaseLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                const std::vector<Blob<Dtype>*>& top) {
  std::vector<yolo::Candidate> candidates;
  const int images = bottom[0]->shape(0);
  for (int n = 0; n < images; ++n) {
    for (size_t t = 0; t < bottom.size(); ++t) {
      DecodeHead(*bottom[t], static_cast<int>(t), n, &candidates);
    }
  }
  yolo::WriteRows(yolo::Select(std::move(candidates), nms_threshold_), images, top[0]);
}

template <typename Dtype>
void YoloDetectionBaseLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                 const std::vector<bool>& propagate_down,
                                                 const std::vector<Blob<Dtype>*>& bottom) {
  for (bool down : propagate_down) {
    CREMA_LAYER_REQUIRE(!down, "has no backward pass (it is for inference only)");
  }
}

INSTANTIATE_CLASS(YoloDetectionBaseLayer);

}  // namespace crema
