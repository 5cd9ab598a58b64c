#include "crema/layers/permute_layer.hpp"

#include <algorithm>

namespace crema {

template <typename Dtype>
std::vector<int> PermuteLayer<Dtype>::FullOrder(int num_axes) const {
  std::vector<int> order;
  for (const uint32_t axis : this->layer_param_.permute_param().order()) {
    CREMA_LAYER_REQUIRE(
        axis < static_cast<uint32_t>(num_axes),
        "order names axis " << axis << ", but the bottom has only " << num_axes << " axes");
    CREMA_LAYER_REQUIRE(
        std::find(order.begin(), order.end(), static_cast<int>(axis)) == order.end(),
        "order names axis " << axis << " twice");
    order.push_back(static_cast<int>(axis));
  }
  for (int axis = 0; axis < num_axes; ++axis) {
    if (std::find(order.begin(), order.end(), axis) == order.end()) order.push_back(axis);
  }
  return order;
}

template <typename Dtype>
void PermuteLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(top[0] != bottom[0], "cannot run in place: give the top its own name");
  const int num_axes = bottom[0]->num_axes();
  const std::vector<int> order = FullOrder(num_axes);
  std::vector<int> top_shape(num_axes);
  for (int i = 0; i < num_axes; ++i) top_shape[i] = bottom[0]->shape(order[i]);
  top[0]->Reshape(top_shape);
  indexing_ = PermuteIndexing();
  indexing_.num_axes = num_axes;
  need_permute_ = false;
  for (int i = 0; i < num_axes; ++i) {
    indexing_.order[i] = order[i];
    indexing_.top_steps[i] = top[0]->count(i + 1);
    indexing_.bottom_steps[i] = bottom[0]->count(i + 1);
    if (order[i] != i) need_permute_ = true;
  }
}

template <typename Dtype>
void PermuteLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const int count = top[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  if (!need_permute_) {
    cpu_copy(count, bottom_data, top_data);
    return;
  }
  for (int t = 0; t < count; ++t) top_data[t] = bottom_data[PermutedBottomIndex(indexing_, t)];
}

template <typename Dtype>
void PermuteLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = top[0]->count();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  if (!need_permute_) {
    cpu_copy(count, top_diff, bottom_diff);
    return;
  }
  // A permutation: every bottom element receives exactly one top element.
  for (int t = 0; t < count; ++t) bottom_diff[PermutedBottomIndex(indexing_, t)] = top_diff[t];
}

#ifdef CPU_ONLY
STUB_GPU(PermuteLayer);
#endif

INSTANTIATE_CLASS(PermuteLayer);
REGISTER_LAYER_CLASS(Permute);

}  // namespace crema
