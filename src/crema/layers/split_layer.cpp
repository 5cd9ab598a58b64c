#include "crema/layers/split_layer.hpp"

namespace crema {

template <typename Dtype>
void SplitLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  for (size_t i = 0; i < top.size(); ++i) {
    // In place, the summed gradient would overwrite a top's own.
    CREMA_LAYER_REQUIRE(top[i] != bottom[0],
                        "cannot compute in place: top " << i << " is the bottom blob");
    top[i]->ReshapeLike(*bottom[0]);
  }
}

template <typename Dtype>
void SplitLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  for (Blob<Dtype>* blob : top) blob->ShareData(*bottom[0]);
}

template <typename Dtype>
void SplitLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  if (top.size() == 1) {
    cpu_copy(count, top[0]->cpu_diff(), bottom_diff);
    return;
  }
  std::vector<const Dtype*> diffs;
  for (const Blob<Dtype>* blob : top) diffs.push_back(blob->cpu_diff());
  cpu_weighted_sum(count, diffs, std::vector<Dtype>(top.size(), Dtype(1)), bottom_diff);
}

#ifndef CREMA_CUDA
STUB_GPU(SplitLayer);
#endif

INSTANTIATE_CLASS(SplitLayer);
REGISTER_LAYER_CLASS(Split);

}  // namespace crema
