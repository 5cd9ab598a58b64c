// LRN, local response normalisation of a 4-D blob: y = x * scale^-beta, where
// ACROSS_CHANNELS: scale = k + alpha / n * (sum of x^2 over the n channels
//   centred on x, zero padded);
// WITHIN_CHANNEL:  scale = 1 + alpha / n^2 * (sum of x^2 over the n x n
//   window centred on x, zero padded); Caffe's composition of AVE pooling.
#ifndef CREMA_LAYERS_LRN_LAYER_HPP_
#define CREMA_LAYERS_LRN_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class LRNLayer : public Layer<Dtype> {
 public:
  explicit LRNLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "LRN"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 protected:
  bool across_channels() const {
    return this->layer_param_.lrn_param().norm_region() == LRNParameter::ACROSS_CHANNELS;
  }
  // The across-channels forward, one pass per output plane.
  void ForwardAcrossChannelsCpu(const Blob<Dtype>& bottom, Blob<Dtype>* top);
  // The across-channels backward, two passes over planes.
  void BackwardAcrossChannelsCpu(const Blob<Dtype>& top, Blob<Dtype>* bottom);
  // One output plane of the across-channels window sum of values (of their
  // squares when kSquares), in channel order.
  template <bool kSquares>
  void ChannelWindowSumCpu(const Dtype* values, int plane, Dtype* out) const;
  // window_sum[i] = sum of values[j] over the neighbourhood of i (the channel
  // run, or the spatial square, of size local_size_ centred on i).
  void WindowSumCpu(const Dtype* values, Dtype* window_sum) const;

  int local_size_ = 0;
  int half_size_ = 0;
  Dtype alpha_ = 0;
  Dtype beta_ = 0;
  // The additive constant of scale: k across channels, 1 within a channel.
  Dtype offset_ = 0;
  // alpha divided by the number of values each window sums.
  Dtype window_alpha_ = 0;
  int num_ = 0, channels_ = 0, height_ = 0, width_ = 0;
  // scale and scale^-beta, kept for Backward (which then computes no power:
  // a power is the costliest operation of the layer).
  Blob<Dtype> scale_;
  Blob<Dtype> power_;
  // Element-wise scratch: x^2 in Forward, dL/dy * y / scale in Backward,
  // and their window sums.
  Blob<Dtype> work_;
  Blob<Dtype> work_window_sum_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_LRN_LAYER_HPP_
