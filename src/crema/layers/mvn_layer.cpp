#include "crema/layers/mvn_layer.hpp"

#include <cmath>
#include <vector>

namespace crema {

template <typename Dtype>
void MVNLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                 const std::vector<Blob<Dtype>*>& top) {
  const MVNParameter& param = this->layer_param_.mvn_param();
  normalize_variance_ = param.normalize_variance();
  eps_ = param.eps();
  CREMA_LAYER_REQUIRE(eps_ >= 0, "eps must be non-negative, got " << param.eps());
}

template <typename Dtype>
void MVNLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                              const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& input = *bottom[0];
  CREMA_LAYER_REQUIRE(input.num_axes() >= 1,
                      "needs a bottom with at least one axis, got shape " << input.shape_string());
  const bool across_channels = this->layer_param_.mvn_param().across_channels();
  rows_ = across_channels || input.num_axes() == 1 ? input.shape(0) : input.count(0, 2);
  row_dim_ = rows_ == 0 ? 0 : input.count() / rows_;
  if (bottom[0] != top[0]) top[0]->ReshapeLike(input);
  const std::vector<int> per_row{rows_};
  mean_.Reshape(per_row);
  std_.Reshape(per_row);
  mean_top_diff_.Reshape(per_row);
  mean_top_diff_y_.Reshape(per_row);
  normalized_.ReshapeLike(input);
  scratch_.ReshapeLike(input);
  ones_.Reshape({row_dim_});
}

template <typename Dtype>
void MVNLayer<Dtype>::RowMeans_cpu(const Dtype* data, Dtype* means) {
  for (int r = 0; r < rows_; ++r) {
    const Dtype* row = data + r * row_dim_;
    Dtype sum = 0;
    for (int i = 0; i < row_dim_; ++i) sum += row[i];
    means[r] = sum / row_dim_;
  }
}

template <typename Dtype>
void MVNLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  Dtype* mean = mean_.mutable_cpu_data();
  RowMeans_cpu(bottom_data, mean);
  for (int r = 0; r < rows_; ++r) {
    for (int i = r * row_dim_; i < (r + 1) * row_dim_; ++i) top_data[i] = bottom_data[i] - mean[r];
  }
  if (!normalize_variance_) return;
  // The variance is the mean square of the centred values.
  cpu_sqr(count, top_data, scratch_.mutable_cpu_data());
  Dtype* std = std_.mutable_cpu_data();
  RowMeans_cpu(scratch_.cpu_data(), std);
  for (int r = 0; r < rows_; ++r) std[r] = std::sqrt(std[r]);
  for (int r = 0; r < rows_; ++r) {
    for (int i = r * row_dim_; i < (r + 1) * row_dim_; ++i) top_data[i] /= std[r] + eps_;
  }
  cpu_copy(count, top_data, normalized_.mutable_cpu_data());
}

// Without variance normalisation, dx = dy - mean(dy). With it, the exact
// derivative of y = (x - mean) / (std + eps) is
//   dx = (dy - mean(dy) - y * mean(dy * y) * (std + eps) / std) / (std + eps);
// a constant row (std = 0) has y = 0, so its last term is 0.
template <typename Dtype>
void MVNLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* mean_top_diff = mean_top_diff_.mutable_cpu_data();
  RowMeans_cpu(top_diff, mean_top_diff);
  // In place, bottom_diff is top_diff: each element is read before written.
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  if (!normalize_variance_) {
    for (int r = 0; r < rows_; ++r) {
      for (int i = r * row_dim_; i < (r + 1) * row_dim_; ++i) {
        bottom_diff[i] = top_diff[i] - mean_top_diff[r];
      }
    }
    return;
  }
  const Dtype* y = normalized_.cpu_data();
  const Dtype* std = std_.cpu_data();
  Dtype* mean_top_diff_y = mean_top_diff_y_.mutable_cpu_data();
  cpu_mul(top[0]->count(), top_diff, y, scratch_.mutable_cpu_data());
  RowMeans_cpu(scratch_.cpu_data(), mean_top_diff_y);
  for (int r = 0; r < rows_; ++r) {
    const Dtype std_plus_eps = std[r] + eps_;
    const Dtype variance_term = std[r] > 0 ? mean_top_diff_y[r] * std_plus_eps / std[r] : Dtype(0);
    for (int i = r * row_dim_; i < (r + 1) * row_dim_; ++i) {
      bottom_diff[i] = (top_diff[i] - mean_top_diff[r] - y[i] * variance_term) / std_plus_eps;
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(MVNLayer);
#endif

INSTANTIATE_CLASS(MVNLayer);
REGISTER_LAYER_CLASS(MVN);

}  // namespace crema
