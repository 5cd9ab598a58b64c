#include "crema/layers/box_annotator_ohem_layer.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace crema {

template <typename Dtype>
void BoxAnnotatorOHEMLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  const BoxAnnotatorOHEMParameter& param = this->layer_param_.box_annotator_ohem_param();
  // roi_per_img is a required field in the fork's schema.
  CREMA_LAYER_REQUIRE(param.has_roi_per_img() && param.roi_per_img() > 0 &&
                          param.roi_per_img() <= static_cast<uint32_t>(INT32_MAX),
                      "box_annotator_ohem_param.roi_per_img must be given, a positive count");
  roi_per_img_ = static_cast<int>(param.roi_per_img());
  ignore_label_ = param.ignore_label();
}

template <typename Dtype>
void BoxAnnotatorOHEMLayer<Dtype>::RequirePerEntry(const Blob<Dtype>& blob, int bottom_index,
                                                   const char* what) const {
  CREMA_LAYER_REQUIRE(
      blob.num_axes() >= 1 && blob.shape(0) == num_rois_ && blob.count() == num_rois_ * spatial_,
      "bottom " << bottom_index << " (" << what << ", shape " << blob.shape_string()
                << ") must hold one value per ROI entry: " << num_rois_ << " x " << spatial_);
}

template <typename Dtype>
void BoxAnnotatorOHEMLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& rois = *bottom[0];
  CREMA_LAYER_REQUIRE(rois.num_axes() >= 2 && rois.shape(1) == 5,
                      "bottom 0 (the ROIs, shape " << rois.shape_string()
                                                   << ") must be [R, 5, ...]: image index, x1, "
                                                      "y1, x2, y2");
  num_rois_ = rois.shape(0);
  spatial_ = rois.count(2);
  const int height = rois.num_axes() > 2 ? rois.shape(2) : 1;
  const int width = rois.num_axes() > 3 ? rois.count(3) : 1;
  RequirePerEntry(*bottom[1], 1, "the losses");
  RequirePerEntry(*bottom[2], 2, "the labels");
  const Blob<Dtype>& weights = *bottom[3];
  CREMA_LAYER_REQUIRE(weights.num_axes() >= 1 && weights.shape(0) == num_rois_ &&
                          (num_rois_ == 0 || weights.count() % (num_rois_ * spatial_) == 0),
                      "bottom 3 (the box weights, shape " << weights.shape_string() << ") must be ["
                                                          << num_rois_ << ", C, ...] with "
                                                          << spatial_ << " positions per channel");
  weight_channels_ = num_rois_ * spatial_ == 0 ? 0 : weights.count() / (num_rois_ * spatial_);
  top[0]->Reshape(std::vector<int>{num_rois_, 1, height, width});
  top[1]->Reshape(std::vector<int>{num_rois_, weight_channels_, height, width});
}

template <typename Dtype>
std::vector<int> BoxAnnotatorOHEMLayer<Dtype>::ByFallingLoss(const Blob<Dtype>& losses) const {
  const Dtype* loss = losses.cpu_data();
  std::vector<int> order(losses.count());
  std::iota(order.begin(), order.end(), 0);
  for (int index : order) {
    CREMA_LAYER_REQUIRE(!std::isnan(loss[index]),
                        "the loss of ROI entry " << index << " is NaN; it cannot be ranked");
  }
  std::stable_sort(order.begin(), order.end(), [loss](int a, int b) { return loss[a] > loss[b]; });
  return order;
}

template <typename Dtype>
int BoxAnnotatorOHEMLayer<Dtype>::ImageOf(const Dtype* rois, int index) const {
  const int roi = index / spatial_, position = index % spatial_;
  const Dtype image = rois[roi * 5 * spatial_ + position];
  CREMA_LAYER_REQUIRE(
      image >= 0 && image < Dtype(INT32_MAX) && std::floor(image) == image,
      "ROI " << roi << " names image " << image << "; an image index is a whole number >= 0");
  return static_cast<int>(image);
}

template <typename Dtype>
void BoxAnnotatorOHEMLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                               const std::vector<Blob<Dtype>*>& top) {
  const Dtype* rois = bottom[0]->cpu_data();
  const Dtype* labels = bottom[2]->cpu_data();
  const Dtype* weights = bottom[3]->cpu_data();
  Dtype* kept_labels = top[0]->mutable_cpu_data();
  Dtype* kept_weights = top[1]->mutable_cpu_data();
  cpu_set(top[0]->count(), Dtype(ignore_label_), kept_labels);
  cpu_set(top[1]->count(), Dtype(0), kept_weights);
  std::unordered_map<int, int> kept_per_image;
  for (int index : ByFallingLoss(*bottom[1])) {
    int& kept = kept_per_image[ImageOf(rois, index)];
    if (kept == roi_per_img_) continue;
    ++kept;
    kept_labels[index] = labels[index];
    const int roi = index / spatial_, position = index % spatial_;
    for (int c = 0; c < weight_channels_; ++c) {
      const int at = (roi * weight_channels_ + c) * spatial_ + position;
      kept_weights[at] = weights[at];
    }
  }
}

template <typename Dtype>
void BoxAnnotatorOHEMLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                                const std::vector<bool>& propagate_down,
                                                const std::vector<Blob<Dtype>*>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i]) cpu_set(bottom[i]->count(), Dtype(0), bottom[i]->mutable_cpu_diff());
  }
}

INSTANTIATE_CLASS(BoxAnnotatorOHEMLayer);
REGISTER_LAYER_CLASS(BoxAnnotatorOHEM);

}  // namespace crema
