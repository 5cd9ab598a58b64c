#include "crema/layers/prior_box_layer.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>

namespace crema {

template <typename Dtype>
void PriorBoxLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  ReadSizes();
  ReadAspectRatios();
  ReadVariances();
  ReadImageSizeAndStep();
  const int per_min_size = static_cast<int>(aspect_ratios_.size()) + (max_sizes_.empty() ? 0 : 1);
  num_priors_ = static_cast<int>(min_sizes_.size()) * per_min_size;
}

template <typename Dtype>
void PriorBoxLayer<Dtype>::ReadSizes() {
  const PriorBoxParameter& param = this->layer_param_.prior_box_param();
  CREMA_LAYER_REQUIRE(param.min_size_size() > 0, "needs at least one prior_box_param.min_size");
  for (const float min_size : param.min_size()) {
    CREMA_LAYER_REQUIRE(std::isfinite(min_size) && min_size > 0,
                        "min_size must be positive, got " << min_size);
    min_sizes_.push_back(min_size);
  }
  if (param.max_size_size() == 0) return;
  CREMA_LAYER_REQUIRE(param.max_size_size() == param.min_size_size(),
                      "needs as many max_size as min_size, got " << param.max_size_size() << " and "
                                                                 << param.min_size_size());
  for (int s = 0; s < param.max_size_size(); ++s) {
    const float max_size = param.max_size(s);
    CREMA_LAYER_REQUIRE(std::isfinite(max_size) && max_size > min_sizes_[s],
                        "max_size must exceed its min_size, got max_size "
                            << max_size << " for min_size " << min_sizes_[s]);
    max_sizes_.push_back(max_size);
  }
}

template <typename Dtype>
void PriorBoxLayer<Dtype>::ReadAspectRatios() {
  const PriorBoxParameter& param = this->layer_param_.prior_box_param();
  aspect_ratios_ = {1.f};
  for (const float ratio : param.aspect_ratio()) {
    CREMA_LAYER_REQUIRE(std::isfinite(ratio) && ratio > 0,
                        "aspect_ratio must be positive, got " << ratio);
    const bool present = std::any_of(aspect_ratios_.begin(), aspect_ratios_.end(),
                                     [ratio](float r) { return std::fabs(ratio - r) < 1e-6; });
    if (present) continue;
    aspect_ratios_.push_back(ratio);
    if (param.flip()) aspect_ratios_.push_back(1.f / ratio);
  }
}

template <typename Dtype>
void PriorBoxLayer<Dtype>::ReadVariances() {
  const PriorBoxParameter& param = this->layer_param_.prior_box_param();
  const int count = param.variance_size();
  CREMA_LAYER_REQUIRE(count == 0 || count == 1 || count == 4,
                      "takes 0, 1 or 4 variance values, got " << count);
  for (const float variance : param.variance()) {
    CREMA_LAYER_REQUIRE(std::isfinite(variance) && variance > 0,
                        "variance must be positive, got " << variance);
  }
  variances_.assign(param.variance().begin(), param.variance().end());
  if (variances_.empty()) variances_ = {0.1f};
}

template <typename Dtype>
void PriorBoxLayer<Dtype>::ReadImageSizeAndStep() {
  const PriorBoxParameter& param = this->layer_param_.prior_box_param();
  const bool has_img_hw = param.has_img_h() || param.has_img_w();
  CREMA_LAYER_REQUIRE(!(has_img_hw && param.has_img_size()),
                      "takes img_size or img_h/img_w, not both");
  CREMA_LAYER_REQUIRE(param.has_img_h() == param.has_img_w(),
                      "needs both img_h and img_w, or neither");
  if (has_img_hw || param.has_img_size()) {
    const uint32_t img_h = has_img_hw ? param.img_h() : param.img_size();
    const uint32_t img_w = has_img_hw ? param.img_w() : param.img_size();
    CREMA_LAYER_REQUIRE(
        img_h > 0 && img_w > 0 && img_h <= INT_MAX && img_w <= INT_MAX,
        "image size must lie in [1, " << INT_MAX << "], got " << img_h << " x " << img_w);
    img_h_ = static_cast<int>(img_h);
    img_w_ = static_cast<int>(img_w);
  }
  const bool has_step_hw = param.has_step_h() || param.has_step_w();
  CREMA_LAYER_REQUIRE(!(has_step_hw && param.has_step()), "takes step or step_h/step_w, not both");
  CREMA_LAYER_REQUIRE(param.has_step_h() == param.has_step_w(),
                      "needs both step_h and step_w, or neither");
  step_h_ = has_step_hw ? param.step_h() : param.step();
  step_w_ = has_step_hw ? param.step_w() : param.step();
  if (has_step_hw || param.has_step()) {
    CREMA_LAYER_REQUIRE(
        std::isfinite(step_h_) && std::isfinite(step_w_) && step_h_ > 0 && step_w_ > 0,
        "step must be positive, got " << step_h_ << " x " << step_w_);
  }
  offset_ = param.offset();
  CREMA_LAYER_REQUIRE(offset_ >= 0 && offset_ <= 1, "offset must lie in [0, 1], got " << offset_);
}

template <typename Dtype>
void PriorBoxLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4 && bottom[1]->num_axes() == 4,
                      "needs 4-axis bottoms (feature map, image), got "
                          << bottom[0]->shape_string() << " and " << bottom[1]->shape_string());
  const int64_t count = int64_t{bottom[0]->shape(2)} * bottom[0]->shape(3) * num_priors_ * 4;
  CREMA_LAYER_REQUIRE(count <= INT_MAX / 2, "a feature map of " << bottom[0]->shape(2) << " x "
                                                                << bottom[0]->shape(3) << " with "
                                                                << num_priors_
                                                                << " priors per cell is too large");
  CREMA_LAYER_REQUIRE(img_h_ > 0 || (bottom[1]->shape(2) > 0 && bottom[1]->shape(3) > 0),
                      "the image bottom has an empty size " << bottom[1]->shape_string());
  top[0]->Reshape({1, 2, static_cast<int>(count)});
}

template <typename Dtype>
std::vector<std::pair<double, double>> PriorBoxLayer<Dtype>::CellBoxSizes() const {
  std::vector<std::pair<double, double>> sizes;
  for (size_t s = 0; s < min_sizes_.size(); ++s) {
    const double min_size = min_sizes_[s];
    sizes.emplace_back(min_size, min_size);
    if (!max_sizes_.empty()) {
      const double side = std::sqrt(min_size * max_sizes_[s]);
      sizes.emplace_back(side, side);
    }
    for (const float ratio : aspect_ratios_) {
      if (std::fabs(ratio - 1.f) < 1e-6) continue;
      sizes.emplace_back(min_size * std::sqrt(double{ratio}), min_size / std::sqrt(double{ratio}));
    }
  }
  return sizes;
}

template <typename Dtype>
void PriorBoxLayer<Dtype>::WriteVariances(int num_boxes, Dtype* variance_data) const {
  for (int b = 0; b < num_boxes; ++b) {
    for (int j = 0; j < 4; ++j)
      variance_data[b * 4 + j] = variances_[variances_.size() == 1 ? 0 : j];
  }
}

template <typename Dtype>
void PriorBoxLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const std::array<int, 4> bottom_sizes{bottom[0]->shape(2), bottom[0]->shape(3),
                                        bottom[1]->shape(2), bottom[1]->shape(3)};
  const std::shared_ptr<SyncedMemory>& memory = top[0]->data();
  if (bottom_sizes == written_sizes_ && written_memory_.lock() == memory &&
      memory->stamp() == written_stamp_) {
    return;
  }
  const int layer_h = bottom[0]->shape(2);
  const int layer_w = bottom[0]->shape(3);
  const double img_h = img_h_ > 0 ? img_h_ : bottom[1]->shape(2);
  const double img_w = img_w_ > 0 ? img_w_ : bottom[1]->shape(3);
  const double step_h = step_h_ > 0 ? double{step_h_} : img_h / layer_h;
  const double step_w = step_w_ > 0 ? double{step_w_} : img_w / layer_w;
  const bool clip = this->layer_param_.prior_box_param().clip();
  const std::vector<std::pair<double, double>> sizes = CellBoxSizes();
  Dtype* box_data = top[0]->mutable_cpu_data();
  int index = 0;
  for (int h = 0; h < layer_h; ++h) {
    for (int w = 0; w < layer_w; ++w) {
      const double center_x = (w + offset_) * step_w;
      const double center_y = (h + offset_) * step_h;
      for (const auto& size : sizes) {
        const double corners[4] = {
            (center_x - size.first / 2) / img_w, (center_y - size.second / 2) / img_h,
            (center_x + size.first / 2) / img_w, (center_y + size.second / 2) / img_h};
        for (const double value : corners) {
          box_data[index++] =
              static_cast<Dtype>(clip ? std::min(std::max(value, 0.0), 1.0) : value);
        }
      }
    }
  }
  WriteVariances(index / 4, box_data + top[0]->count(2));
  written_sizes_ = bottom_sizes;
  written_memory_ = memory;
  written_stamp_ = memory->stamp();
}

// The boxes depend on the bottoms' shapes only: their gradient is zero.
template <typename Dtype>
void PriorBoxLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i]) cpu_set(bottom[i]->count(), Dtype(0), bottom[i]->mutable_cpu_diff());
  }
}

#ifndef CREMA_CUDA
STUB_GPU(PriorBoxLayer);
#endif

INSTANTIATE_CLASS(PriorBoxLayer);
REGISTER_LAYER_CLASS(PriorBox);

}  // namespace crema
