#include "crema/layers/permute_layer.hpp"

#include <algorithm>

namespace crema {

namespace {

// Calls row(t, b, stride, length) for each run along the top's last axis:
// top elements t .. t + length - 1 are bottom elements b, b + stride, ...
// It walks the top in order and carries the bottom offset from run to run
// (an odometer over the other axes), so no element costs a division.
// Requires count > 0 and at least one axis.
template <typename Row>
void ForEachTopRun(const PermuteIndexing& indexing, int64_t count, Row row) {
  const int last = indexing.num_axes - 1;
  int64_t shape[kMaxBlobAxes];
  int64_t coordinate[kMaxBlobAxes] = {};
  for (int i = 0; i <= last; ++i) {
    shape[i] = (i == 0 ? count : indexing.top_steps[i - 1]) / indexing.top_steps[i];
  }
  const int64_t length = shape[last], stride = indexing.bottom_steps[indexing.order[last]];
  int64_t bottom = 0;
  for (int64_t t = 0; t < count; t += length) {
    row(t, bottom, stride, length);
    for (int i = last - 1; i >= 0; --i) {
      const int64_t step = indexing.bottom_steps[indexing.order[i]];
      bottom += step;
      if (++coordinate[i] < shape[i]) break;
      bottom -= shape[i] * step;
      coordinate[i] = 0;
    }
  }
}

}  // namespace

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
  if (count == 0) return;
  ForEachTopRun(indexing_, count, [&](int64_t t, int64_t b, int64_t stride, int64_t length) {
    for (int64_t i = 0; i < length; ++i) top_data[t + i] = bottom_data[b + i * stride];
  });
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
  if (count == 0) return;
  ForEachTopRun(indexing_, count, [&](int64_t t, int64_t b, int64_t stride, int64_t length) {
    for (int64_t i = 0; i < length; ++i) bottom_diff[b + i * stride] = top_diff[t + i];
  });
}

#ifndef CREMA_CUDA
STUB_GPU(PermuteLayer);
#endif

INSTANTIATE_CLASS(PermuteLayer);
REGISTER_LAYER_CLASS(Permute);

}  // namespace crema
