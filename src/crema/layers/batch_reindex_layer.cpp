#include "crema/layers/batch_reindex_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void BatchReindexLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(
      bottom[1]->num_axes() == 1,
      "the indices (bottom 1) must be a 1-D blob, got shape " << bottom[1]->shape_string());
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() >= 1,
                      "the data (bottom 0) needs an item axis, got a scalar");
  std::vector<int> top_shape = bottom[0]->shape();
  top_shape[0] = bottom[1]->shape(0);
  top[0]->Reshape(top_shape);
}

template <typename Dtype>
std::vector<int> BatchReindexLayer<Dtype>::ReadIndices(const Blob<Dtype>& indices,
                                                       int num_items) const {
  std::vector<int> items(indices.count());
  if (items.empty()) return items;
  const Dtype* values = indices.cpu_data();
  for (size_t k = 0; k < items.size(); ++k) {
    const Dtype value = values[k];
    CREMA_LAYER_REQUIRE(value >= 0 && value < num_items && value == std::floor(value),
                        "index " << k << " is " << value << ", not an item of bottom 0 (a whole "
                                 << "number in [0, " << num_items << "))");
    items[k] = static_cast<int>(value);
  }
  return items;
}

template <typename Dtype>
void BatchReindexLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  const std::vector<int> items = ReadIndices(*bottom[1], bottom[0]->shape(0));
  const int item_size = bottom[0]->count(1);
  if (items.empty() || item_size == 0) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (size_t k = 0; k < items.size(); ++k) {
    cpu_copy(item_size, bottom_data + int64_t(items[k]) * item_size,
             top_data + int64_t(k) * item_size);
  }
}

template <typename Dtype>
void BatchReindexLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  // Indices are piecewise constant: their gradient is zero.
  if (propagate_down[1] && bottom[1]->count() > 0) {
    cpu_set(bottom[1]->count(), Dtype(0), bottom[1]->mutable_cpu_diff());
  }
  if (!propagate_down[0] || bottom[0]->count() == 0) return;
  const std::vector<int> items = ReadIndices(*bottom[1], bottom[0]->shape(0));
  const int item_size = bottom[0]->count(1);
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_set(bottom[0]->count(), Dtype(0), bottom_diff);
  if (items.empty()) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  for (size_t k = 0; k < items.size(); ++k) {
    cpu_axpy(item_size, Dtype(1), top_diff + int64_t(k) * item_size,
             bottom_diff + int64_t(items[k]) * item_size);
  }
}

INSTANTIATE_CLASS(BatchReindexLayer);
REGISTER_LAYER_CLASS(BatchReindex);

}  // namespace crema
