// Convolution: each top is the bottom of the same index convolved with the
// layer's filters (weights [num_output, channels / group, kernel...], bias
// [num_output]); N-D, with stride, pad, dilation and groups.
#ifndef CREMA_LAYERS_CONV_LAYER_HPP_
#define CREMA_LAYERS_CONV_LAYER_HPP_

#include <vector>

#include "crema/layers/base_conv_layer.hpp"

namespace crema {

template <typename Dtype>
class ConvolutionLayer : public BaseConvolutionLayer<Dtype> {
 public:
  explicit ConvolutionLayer(const LayerParameter& param) : BaseConvolutionLayer<Dtype>(param) {}
  const char* type() const override { return "Convolution"; }

 protected:
  using ChunkBuffers = typename BaseConvolutionLayer<Dtype>::ChunkBuffers;
  bool ReverseDimensions() const override { return false; }
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_LAYERS_CONV_LAYER_HPP_
