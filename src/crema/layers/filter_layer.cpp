#include "crema/layers/filter_layer.hpp"

#include <algorithm>

namespace crema {

template <typename Dtype>
void FilterLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(top.size() == bottom.size() - 1,
                      "needs one top per filtered bottom (all bottoms but the last, the "
                          << "selector): " << bottom.size() - 1 << " tops, got " << top.size());
  selector_ready_ = false;
}

template <typename Dtype>
void FilterLayer<Dtype>::CheckShapes(const std::vector<Blob<Dtype>*>& bottom) {
  const Blob<Dtype>& selector = *bottom.back();
  CREMA_LAYER_REQUIRE(selector.num_axes() >= 1, "the selector (last bottom) needs an item axis, "
                                                    << "got a scalar");
  for (int axis = 1; axis < selector.num_axes(); ++axis) {
    CREMA_LAYER_REQUIRE(selector.shape(axis) == 1,
                        "the selector (last bottom) must be of shape [N] or [N, 1, ...], got "
                            << selector.shape_string());
  }
  for (size_t i = 0; i + 1 < bottom.size(); ++i) {
    CREMA_LAYER_REQUIRE(bottom[i]->num_axes() >= 1 && bottom[i]->shape(0) == selector.shape(0),
                        "bottom " << i << " (shape " << bottom[i]->shape_string()
                                  << ") must have as many items along axis 0 as the selector ("
                                  << selector.shape(0) << ")");
  }
}

template <typename Dtype>
void FilterLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  CheckShapes(bottom);
  const Blob<Dtype>& selector = *bottom.back();
  const int num_items = selector.shape(0);
  kept_items_.clear();
  if (num_items > 0) {
    const Dtype* selected = selector.cpu_data();
    for (int n = 0; n < num_items; ++n) {
      if (selected[n] != Dtype(0)) kept_items_.push_back(n);
    }
  }
  const int num_kept = selector_ready_ ? static_cast<int>(kept_items_.size()) : num_items;
  selector_ready_ = true;
  for (size_t t = 0; t < top.size(); ++t) {
    std::vector<int> top_shape = bottom[t]->shape();
    top_shape[0] = num_kept;
    top[t]->Reshape(top_shape);
  }
}

template <typename Dtype>
void FilterLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  for (size_t t = 0; t < top.size(); ++t) {
    const int item_size = bottom[t]->count(1);
    if (kept_items_.empty() || item_size == 0) continue;
    const Dtype* bottom_data = bottom[t]->cpu_data();
    Dtype* top_data = top[t]->mutable_cpu_data();
    for (size_t k = 0; k < kept_items_.size(); ++k) {
      cpu_copy(item_size, bottom_data + int64_t(kept_items_[k]) * item_size,
               top_data + int64_t(k) * item_size);
    }
  }
}

template <typename Dtype>
void FilterLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob<Dtype>*>& bottom) {
  for (size_t t = 0; t < top.size(); ++t) {
    if (!propagate_down[t] || bottom[t]->count() == 0) continue;
    const int item_size = bottom[t]->count(1);
    Dtype* bottom_diff = bottom[t]->mutable_cpu_diff();
    cpu_set(bottom[t]->count(), Dtype(0), bottom_diff);
    if (kept_items_.empty()) continue;
    const Dtype* top_diff = top[t]->cpu_diff();
    for (size_t k = 0; k < kept_items_.size(); ++k) {
      cpu_copy(item_size, top_diff + int64_t(k) * item_size,
               bottom_diff + int64_t(kept_items_[k]) * item_size);
    }
  }
  // The selector is piecewise constant: its gradient is zero.
  Blob<Dtype>& selector = *bottom.back();
  if (propagate_down.back() && selector.count() > 0) {
    cpu_set(selector.count(), Dtype(0), selector.mutable_cpu_diff());
  }
}

INSTANTIATE_CLASS(FilterLayer);
REGISTER_LAYER_CLASS(Filter);

}  // namespace crema
