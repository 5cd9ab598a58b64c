#include "crema/layers/axpy_layer.hpp"

namespace crema {

template <typename Dtype>
void AxpyLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                               const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& x = *bottom[1];
  const Blob<Dtype>& y = *bottom[2];
  CREMA_LAYER_REQUIRE(x.num_axes() >= 2, "bottom 1 (x) needs a channel axis (axis 1), its shape "
                                             << "is " << x.shape_string());
  CheckScaleShape(*bottom[0], x);
  CREMA_LAYER_REQUIRE(y.shape() == x.shape(), "bottom 2 (y) has shape "
                                                  << y.shape_string()
                                                  << ", it must have bottom 1 (x)'s shape "
                                                  << x.shape_string());
  CREMA_LAYER_REQUIRE(top[0] != bottom[0] && top[0] != bottom[1],
                      "the top may share only bottom 2 (y)'s blob, not a's or x's");
  scales_ = x.count(0, 2);
  spatial_dim_ = x.count(2);
  top[0]->ReshapeLike(x);
}

template <typename Dtype>
void AxpyLayer<Dtype>::CheckScaleShape(const Blob<Dtype>& a, const Blob<Dtype>& x) {
  const bool one_per_channel =
      a.num_axes() >= 2 && a.shape(0) == x.shape(0) && a.shape(1) == x.shape(1) && a.count(2) == 1;
  CREMA_LAYER_REQUIRE(one_per_channel, "bottom 0 (a) has shape "
                                           << a.shape_string() << ", it must be [N, C] or [N, C, "
                                           << "1, 1] for bottom 1 (x) of shape "
                                           << x.shape_string());
}

template <typename Dtype>
void AxpyLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const Dtype* a = bottom[0]->cpu_data();
  const Dtype* x = bottom[1]->cpu_data();
  const Dtype* y = bottom[2]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int channel = 0; channel < scales_; ++channel) {
    const size_t offset = static_cast<size_t>(channel) * spatial_dim_;
    for (int s = 0; s < spatial_dim_; ++s) {
      top_data[offset + s] = a[channel] * x[offset + s] + y[offset + s];
    }
  }
}

template <typename Dtype>
void AxpyLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* top_diff = top[0]->cpu_diff();
  if (propagate_down[0]) {
    const Dtype* x = bottom[1]->cpu_data();
    Dtype* a_diff = bottom[0]->mutable_cpu_diff();
    for (int channel = 0; channel < scales_; ++channel) {
      const size_t offset = static_cast<size_t>(channel) * spatial_dim_;
      a_diff[channel] = cpu_dot(spatial_dim_, x + offset, top_diff + offset);
    }
  }
  if (propagate_down[1]) {
    const Dtype* a = bottom[0]->cpu_data();
    Dtype* x_diff = bottom[1]->mutable_cpu_diff();
    for (int channel = 0; channel < scales_; ++channel) {
      const size_t offset = static_cast<size_t>(channel) * spatial_dim_;
      cpu_scale(spatial_dim_, a[channel], top_diff + offset, x_diff + offset);
    }
  }
  // In place, y's gradient is the top's already.
  if (propagate_down[2] && top[0] != bottom[2]) {
    cpu_copy(top[0]->count(), top_diff, bottom[2]->mutable_cpu_diff());
  }
}

#ifndef CREMA_CUDA
STUB_GPU(AxpyLayer);
#endif

INSTANTIATE_CLASS(AxpyLayer);
REGISTER_LAYER_CLASS(Axpy);

}  // namespace crema
