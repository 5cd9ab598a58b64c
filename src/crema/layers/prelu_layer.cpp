#include "crema/layers/prelu_layer.hpp"

#include <algorithm>

#include "crema/filler.hpp"

namespace crema {

template <typename Dtype>
void PReLULayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() >= 2,
                      "needs a bottom with a channel axis (at least 2 axes), got shape "
                          << bottom[0]->shape_string());
  const PReLUParameter& prelu_param = this->layer_param_.prelu_param();
  channel_shared_ = prelu_param.channel_shared();
  if (this->blobs_.empty()) {
    // As in Caffe, the shared slope is a blob with no axes (one element).
    const std::vector<int> slope_shape =
        channel_shared_ ? std::vector<int>() : std::vector<int>{bottom[0]->shape(1)};
    this->blobs_.emplace_back(new Blob<Dtype>(slope_shape));
    FillerParameter filler_param;
    if (prelu_param.has_filler()) {
      filler_param = prelu_param.filler();
    } else {
      filler_param.set_type("constant");
      filler_param.set_value(0.25);
    }
    GetFiller<Dtype>(filler_param)->Fill(this->blobs_[0].get());
  }
  CREMA_LAYER_REQUIRE(this->blobs_.size() == 1,
                      "has one learnable blob (the slopes), got " << this->blobs_.size());
  if (channel_shared_) {
    CREMA_LAYER_REQUIRE(NumSlopes() == 1,
                        "with channel_shared needs one slope, got " << NumSlopes());
  }
}

template <typename Dtype>
void PReLULayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() >= 2,
                      "needs a bottom with a channel axis (at least 2 axes), got shape "
                          << bottom[0]->shape_string());
  if (!channel_shared_) {
    CREMA_LAYER_REQUIRE(NumSlopes() == bottom[0]->shape(1),
                        "has " << NumSlopes() << " slopes but the bottom has "
                               << bottom[0]->shape(1) << " channels (axis 1 of shape "
                               << bottom[0]->shape_string() << ")");
  }
  NeuronLayer<Dtype>::Reshape(bottom, top);
  if (top[0] == bottom[0]) bottom_copy_.ReshapeLike(*bottom[0]);
  const int num = bottom[0]->shape(0);
  const int count = bottom[0]->count();
  const int slope_group_size = num * NumSlopes() > 0 ? count / (num * NumSlopes()) : 0;
  slope_terms_.ReshapeLike(*bottom[0]);
  per_sample_sums_.Reshape(std::vector<int>{num, NumSlopes()});
  ones_.Reshape(std::vector<int>{std::max(num, slope_group_size)});
}

template <typename Dtype>
void PReLULayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const int channels = bottom[0]->shape(1);
  const int inner_size = bottom[0]->count(2);
  const Dtype* bottom_data = bottom[0]->cpu_data();
  if (top[0] == bottom[0]) cpu_copy(count, bottom_data, bottom_copy_.mutable_cpu_data());
  const Dtype* slope = this->blobs_[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int i = 0; i < count; ++i) {
    const int c = channel_shared_ ? 0 : (i / inner_size) % channels;
    const Dtype x = bottom_data[i];
    top_data[i] = x > 0 ? x : slope[c] * x;
  }
}

// The slope gradient is taken first: in place, top diff and bottom diff are
// the same memory, and the bottom gradient overwrites it.
template <typename Dtype>
void PReLULayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  const int count = bottom[0]->count();
  const int channels = bottom[0]->shape(1);
  const int inner_size = bottom[0]->count(2);
  const Dtype* bottom_data = top[0] == bottom[0] ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  if (this->param_propagate_down(0)) {
    Dtype* slope_diff = this->blobs_[0]->mutable_cpu_diff();
    for (int i = 0; i < count; ++i) {
      const int c = channel_shared_ ? 0 : (i / inner_size) % channels;
      if (bottom_data[i] <= 0) slope_diff[c] += top_diff[i] * bottom_data[i];
    }
  }
  if (propagate_down[0]) {
    const Dtype* slope = this->blobs_[0]->cpu_data();
    Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
    for (int i = 0; i < count; ++i) {
      const int c = channel_shared_ ? 0 : (i / inner_size) % channels;
      bottom_diff[i] = top_diff[i] * (bottom_data[i] > 0 ? Dtype(1) : slope[c]);
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(PReLULayer);
#endif

INSTANTIATE_CLASS(PReLULayer);
REGISTER_LAYER_CLASS(PReLU);

}  // namespace crema
