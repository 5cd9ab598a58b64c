#include "crema/layers/smooth_l1_loss_layer.hpp"

#include <cmath>

namespace crema {

template <typename Dtype>
void SmoothL1LossLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::LayerSetUp(bottom, top);
  const float sigma = this->layer_param_.smooth_l1_loss_param().sigma();
  CREMA_LAYER_REQUIRE(std::isfinite(sigma) && sigma > 0,
                      "smooth_l1_loss_param.sigma is " << sigma << "; it must be positive");
  sigma2_ = Dtype(sigma) * Dtype(sigma);
  // py-faster-rcnn's and SSD's divide by the items and read no loss_param.
  normalization_ =
      this->NormalizationOf(this->layer_param_.loss_param(), LossParameter::BATCH_SIZE);
  if (top.size() > 1) this->RequireOutputTop(1, "each item's loss");
}

template <typename Dtype>
void SmoothL1LossLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  for (size_t i = 1; i < bottom.size(); ++i) {
    CREMA_LAYER_REQUIRE(bottom[i]->count() == bottom[0]->count(),
                        "bottom " << i << " has shape " << bottom[i]->shape_string()
                                  << ", bottom 0 " << bottom[0]->shape_string()
                                  << "; each must hold as many values");
  }
  slope_.ReshapeLike(*bottom[0]);
  errors_.ReshapeLike(*bottom[0]);
  if (top.size() > 1) {
    CREMA_LAYER_REQUIRE(bottom[0]->num_axes() >= 2,
                        "top 1 (each item's loss) sums over axis 1; the prediction has shape "
                            << bottom[0]->shape_string());
    std::vector<int> shape = bottom[0]->shape();
    shape[1] = 1;
    top[1]->Reshape(shape);
  }
  if (ones_.count() != bottom[0]->count()) {
    ones_.ReshapeLike(*bottom[0]);
    cpu_set(ones_.count(), Dtype(1), ones_.mutable_cpu_data());
  }
}

template <typename Dtype>
void SmoothL1LossLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* a = bottom[0]->cpu_data();
  const Dtype* b = bottom[1]->cpu_data();
  const Dtype* w_in = inside(bottom) ? inside(bottom)->cpu_data() : nullptr;
  const Dtype* w_out = outside(bottom) ? outside(bottom)->cpu_data() : nullptr;
  Dtype* slope = slope_.mutable_cpu_data();
  Dtype* errors = errors_.mutable_cpu_data();
  const Dtype knee = 1 / sigma2_;
  double loss = 0;
  for (int i = 0; i < count; ++i) {
    const Dtype in = w_in ? w_in[i] : Dtype(1), out = w_out ? w_out[i] : Dtype(1);
    const Dtype x = in * (a[i] - b[i]);
    const bool quadratic = std::abs(x) < knee;
    errors[i] = out * (quadratic ? Dtype(0.5) * sigma2_ * x * x : std::abs(x) - Dtype(0.5) * knee);
    loss += errors[i];
    const Dtype f_prime = quadratic ? sigma2_ * x : (x > 0 ? Dtype(1) : (x < 0 ? Dtype(-1) : 0));
    slope[i] = out * f_prime * in;
  }
  top[0]->mutable_cpu_data()[0] = Dtype(loss / LossNormalizer(*bottom[0]));
  if (top.size() > 1) ItemLosses_cpu(*bottom[0], top[1]);
}

template <typename Dtype>
Dtype SmoothL1LossLayer<Dtype>::LossNormalizer(const Blob<Dtype>& prediction) const {
  const int items = prediction.shape(0);
  const int inner = prediction.num_axes() > 2 ? prediction.count(2) : 1;
  return this->Normalizer(normalization_, items, inner, -1);
}

template <typename Dtype>
void SmoothL1LossLayer<Dtype>::ItemLosses_cpu(const Blob<Dtype>& prediction,
                                              Blob<Dtype>* items) const {
  const int outer = prediction.shape(0), channels = prediction.shape(1);
  const int inner = prediction.count(2);
  const Dtype* errors = errors_.cpu_data();
  Dtype* out = items->mutable_cpu_data();
  for (int n = 0; n < outer; ++n) {
    for (int s = 0; s < inner; ++s) {
      Dtype sum = 0;
      for (int c = 0; c < channels; ++c) sum += errors[(n * channels + c) * inner + s];
      out[n * inner + s] = sum;
    }
  }
}

template <typename Dtype>
void SmoothL1LossLayer<Dtype>::RequireNoWeightGradient(
    const std::vector<bool>& propagate_down) const {
  for (size_t i = 2; i < propagate_down.size(); ++i) {
    CREMA_LAYER_REQUIRE(!propagate_down[i],
                        "cannot backpropagate to the weights (bottom " << i << ")");
  }
}

// d loss / d a = slope / N, d loss / d b = -slope / N (N the normalizer),
// times the top's gradient.
template <typename Dtype>
void SmoothL1LossLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  RequireNoWeightGradient(propagate_down);
  for (int i = 0; i < 2; ++i) {
    if (!propagate_down[i]) continue;
    const Dtype scale = (i == 0 ? 1 : -1) * top[0]->cpu_diff()[0] / LossNormalizer(*bottom[0]);
    cpu_scale(bottom[i]->count(), scale, slope_.cpu_data(), bottom[i]->mutable_cpu_diff());
  }
}

#ifndef CREMA_CUDA
STUB_GPU(SmoothL1LossLayer);
#endif

INSTANTIATE_CLASS(SmoothL1LossLayer);
REGISTER_LAYER_CLASS(SmoothL1Loss);
INSTANTIATE_CLASS(SmoothL1LossOHEMLayer);
REGISTER_LAYER_CLASS(SmoothL1LossOHEM);

}  // namespace crema
