#include "crema/layers/dropout_layer.hpp"

namespace crema {

template <typename Dtype>
void DropoutLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  dropout_ratio_ = this->layer_param_.dropout_param().dropout_ratio();
  CREMA_LAYER_REQUIRE(dropout_ratio_ >= 0 && dropout_ratio_ < 1,
                      "dropout_ratio must be in [0, 1), got " << dropout_ratio_);
  // scale_train (py-faster-rcnn, SSD, R-FCN, OpenCV; default true as in
  // BVLC Caffe): false keeps TRAIN's values unscaled and multiplies TEST's by
  // 1 - ratio instead, the same expectation either way.
  const bool scale_train = this->layer_param_.dropout_param().scale_train();
  train_scale_ = scale_train ? Dtype(1) / (Dtype(1) - dropout_ratio_) : Dtype(1);
  test_scale_ = scale_train ? Dtype(1) : Dtype(1) - dropout_ratio_;
  // SegNet's sample_weights_test (Bayesian SegNet's Monte Carlo dropout):
  // TEST drops at random as TRAIN does.
  drops_ = this->phase_ == TRAIN || this->layer_param_.dropout_param().sample_weights_test();
  // A uniform 32-bit draw falls below ratio * 2^32 with probability ratio.
  uint_threshold_ = static_cast<unsigned int>(static_cast<double>(dropout_ratio_) * 4294967296.0);
}

template <typename Dtype>
void DropoutLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  NeuronLayer<Dtype>::Reshape(bottom, top);
  const size_t mask_bytes = bottom[0]->count() * sizeof(unsigned int);
  if (!mask_ || mask_->size() < mask_bytes) mask_.reset(new SyncedMemory(mask_bytes));
}

template <typename Dtype>
void DropoutLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  if (!drops_) {
    cpu_scale(count, test_scale_, bottom_data, top_data);
    return;
  }
  unsigned int* mask = static_cast<unsigned int*>(mask_->mutable_cpu_data());
  rng_bernoulli(count, Dtype(1) - dropout_ratio_, mask);
  for (int i = 0; i < count; ++i) top_data[i] = bottom_data[i] * Dtype(mask[i]) * train_scale_;
}

template <typename Dtype>
void DropoutLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  if (!drops_) {
    cpu_scale(count, test_scale_, top_diff, bottom_diff);
    return;
  }
  const unsigned int* mask = static_cast<const unsigned int*>(mask_->cpu_data());
  for (int i = 0; i < count; ++i) bottom_diff[i] = top_diff[i] * Dtype(mask[i]) * train_scale_;
}

#ifndef CREMA_CUDA
STUB_GPU(DropoutLayer);
#endif

INSTANTIATE_CLASS(DropoutLayer);
REGISTER_LAYER_CLASS(Dropout);

}  // namespace crema
