#include "crema/layers/fixed_neuron_layer.hpp"

#include <algorithm>
#include <cmath>

namespace crema {

template <typename Dtype>
void FixedNeuronLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>& top) {
  const FixedParameter& param = this->layer_param_.fixed_param();
  enabled_ = param.enable();
  truncate_ = param.follow_data_layer();
  CREMA_LAYER_REQUIRE(param.bit_width() >= 1 && param.bit_width() <= 32,
                      "fixed_param.bit_width must lie in [1, 32], got " << param.bit_width());
  bit_width_ = param.bit_width();
  CREMA_LAYER_REQUIRE(!enabled_ || this->phase_ == TEST,
                      "in a TRAIN net is Xilinx's calibration (choosing the fixed position "
                      "from the data), which Crema does not run; it computes the deployed "
                      "(TEST) quantisation only");
  if (this->blobs_.empty()) {
    this->blobs_.emplace_back(new Blob<Dtype>(std::vector<int>{1}));
    this->blobs_[0]->mutable_cpu_data()[0] = 0;
  }
  CREMA_LAYER_REQUIRE(
      this->blobs_.size() == 1 && this->blobs_[0]->count() == 1,
      "holds one blob, the fixed position [1]; got " << this->blobs_.size() << " blobs");
  const Dtype position = this->blobs_[0]->cpu_data()[0];
  CREMA_LAYER_REQUIRE(std::isfinite(position) && std::fabs(position) <= 64,
                      "fixed position " << position << " is outside [-64, 64]");
  this->set_param_propagate_down(0, false);
}

template <typename Dtype>
void FixedNeuronLayer<Dtype>::ReadPosition(Dtype* step, Dtype* lower, Dtype* upper) const {
  const int position = static_cast<int>(std::floor(this->blobs_[0]->cpu_data()[0]));
  *step = static_cast<Dtype>(std::ldexp(1.0, -position));
  const double levels = std::ldexp(1.0, bit_width_ - 1);
  *lower = static_cast<Dtype>(-levels * *step);
  *upper = static_cast<Dtype>((levels - 1) * *step);
}

template <typename Dtype>
void FixedNeuronLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* x = bottom[0]->cpu_data();
  Dtype* y = top[0]->mutable_cpu_data();
  if (!enabled_) {
    if (x != y) cpu_copy(count, x, y);
    return;
  }
  Dtype step, lower, upper;
  ReadPosition(&step, &lower, &upper);
  for (int i = 0; i < count; ++i) {
    if (truncate_) {
      y[i] = std::trunc(x[i] / step) * step;
    } else {
      y[i] = std::min(std::max(std::floor(x[i] / step + Dtype(0.5)) * step, lower), upper);
    }
  }
}

// Straight through, as the fork.
template <typename Dtype>
void FixedNeuronLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0] || top[0] == bottom[0]) return;
  cpu_copy(top[0]->count(), top[0]->cpu_diff(), bottom[0]->mutable_cpu_diff());
}

#ifndef CREMA_CUDA
STUB_GPU(FixedNeuronLayer);
#endif

INSTANTIATE_CLASS(FixedNeuronLayer);
REGISTER_LAYER_CLASS(FixedNeuron);

}  // namespace crema
