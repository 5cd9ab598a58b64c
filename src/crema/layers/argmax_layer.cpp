#include "crema/layers/argmax_layer.hpp"

#include <algorithm>
#include <utility>

namespace crema {

template <typename Dtype>
void ArgMaxLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const ArgMaxParameter& param = this->layer_param_.argmax_param();
  out_max_val_ = param.out_max_val();
  CREMA_LAYER_REQUIRE(param.top_k() >= 1, "top_k must be at least 1, got " << param.top_k());
  top_k_ = static_cast<int>(param.top_k());
  has_axis_ = param.has_axis();
  if (has_axis_) {
    const int num_axes = bottom[0]->num_axes();
    CREMA_LAYER_REQUIRE(param.axis() >= -num_axes && param.axis() < num_axes,
                        "axis " << param.axis() << " is out of range for a bottom of shape "
                                << bottom[0]->shape_string() << " (" << num_axes << " axes)");
    axis_ = bottom[0]->CanonicalAxisIndex(param.axis());
  }
}

template <typename Dtype>
void ArgMaxLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& input = *bottom[0];
  if (has_axis_) {
    CREMA_LAYER_REQUIRE(
        axis_ < input.num_axes(),
        "axis " << axis_ << " is out of range for a bottom of shape " << input.shape_string());
    CREMA_LAYER_REQUIRE(top_k_ <= input.shape(axis_), "top_k (" << top_k_ << ") exceeds the size "
                                                                << input.shape(axis_) << " of axis "
                                                                << axis_ << " of the bottom, shape "
                                                                << input.shape_string());
    std::vector<int> top_shape = input.shape();
    top_shape[axis_] = top_k_;
    top[0]->Reshape(top_shape);
    return;
  }
  CREMA_LAYER_REQUIRE(input.num_axes() >= 1, "needs a bottom with at least one axis (items), got "
                                                 << "a scalar");
  CREMA_LAYER_REQUIRE(top_k_ <= input.count(1), "top_k (" << top_k_ << ") exceeds the "
                                                          << input.count(1)
                                                          << " values of each item of the bottom, "
                                                          << "shape " << input.shape_string());
  std::vector<int> top_shape(std::max(input.num_axes(), 3), 1);
  top_shape[0] = input.shape(0);
  top_shape[1] = out_max_val_ ? 2 : 1;
  top_shape[2] = top_k_;
  top[0]->Reshape(top_shape);
}

template <typename Dtype>
void ArgMaxLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& input = *bottom[0];
  if (input.count() == 0) return;
  // Each search runs over `dim` values spaced `stride` apart; the searches
  // are numbered outer-major, inner-minor around the searched axis.
  const int dim = has_axis_ ? input.shape(axis_) : input.count(1);
  const int stride = has_axis_ ? input.count(axis_ + 1) : 1;
  const int num_searches = input.count() / dim;
  const Dtype* bottom_data = input.cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  // Larger value first; on equal values the lower index wins.
  auto ranks_before = [](const std::pair<Dtype, int>& a, const std::pair<Dtype, int>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::vector<std::pair<Dtype, int>> candidates(dim);
  for (int search = 0; search < num_searches; ++search) {
    const int outer = search / stride;
    const int inner = search % stride;
    const Dtype* values = bottom_data + int64_t(outer) * dim * stride + inner;
    for (int j = 0; j < dim; ++j) candidates[j] = {values[int64_t(j) * stride], j};
    std::partial_sort(candidates.begin(), candidates.begin() + top_k_, candidates.end(),
                      ranks_before);
    if (has_axis_) {
      Dtype* out = top_data + int64_t(outer) * top_k_ * stride + inner;
      for (int k = 0; k < top_k_; ++k) {
        out[int64_t(k) * stride] =
            out_max_val_ ? candidates[k].first : static_cast<Dtype>(candidates[k].second);
      }
    } else {
      Dtype* out = top_data + int64_t(search) * (out_max_val_ ? 2 : 1) * top_k_;
      for (int k = 0; k < top_k_; ++k) {
        out[k] = static_cast<Dtype>(candidates[k].second);
        if (out_max_val_) out[top_k_ + k] = candidates[k].first;
      }
    }
  }
}

INSTANTIATE_CLASS(ArgMaxLayer);
REGISTER_LAYER_CLASS(ArgMax);

}  // namespace crema
