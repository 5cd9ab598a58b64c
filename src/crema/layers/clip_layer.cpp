#include "crema/layers/clip_layer.hpp"

#include <algorithm>

namespace crema {

template <typename Dtype>
void ClipLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const ClipParameter& clip_param = this->layer_param_.clip_param();
  CREMA_LAYER_REQUIRE(clip_param.has_min() && clip_param.has_max(),
                      "needs clip_param { min: ... max: ... }");
  min_ = clip_param.min();
  max_ = clip_param.max();
  CREMA_LAYER_REQUIRE(min_ <= max_,
                      "min must not exceed max, got min " << min_ << " and max " << max_);
}

template <typename Dtype>
void ClipLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                               const std::vector<Blob<Dtype>*>& top) {
  NeuronLayer<Dtype>::Reshape(bottom, top);
  if (top[0] == bottom[0]) bottom_copy_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void ClipLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  if (top[0] == bottom[0]) cpu_copy(count, bottom_data, bottom_copy_.mutable_cpu_data());
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int i = 0; i < count; ++i) top_data[i] = std::min(std::max(bottom_data[i], min_), max_);
}

template <typename Dtype>
void ClipLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = top[0] == bottom[0] ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  for (int i = 0; i < count; ++i) {
    const bool inside = bottom_data[i] >= min_ && bottom_data[i] <= max_;
    bottom_diff[i] = inside ? top_diff[i] : Dtype(0);
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ClipLayer);
#endif

INSTANTIATE_CLASS(ClipLayer);
REGISTER_LAYER_CLASS(Clip);

}  // namespace crema
