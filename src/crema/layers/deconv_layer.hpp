// Deconvolution (transposed convolution): the backward pass of a Convolution
// run forward, so each top is as large as the input that a Convolution with
// the same parameters would map onto the bottom. Weights are
// [channels, num_output / group, kernel...], bias [num_output].
#ifndef CREMA_LAYERS_DECONV_LAYER_HPP_
#define CREMA_LAYERS_DECONV_LAYER_HPP_

#include <vector>

#include "crema/layers/base_conv_layer.hpp"

namespace crema {

template <typename Dtype>
class DeconvolutionLayer : public BaseConvolutionLayer<Dtype> {
 public:
  explicit DeconvolutionLayer(const LayerParameter& param) : BaseConvolutionLayer<Dtype>(param) {}
  const char* type() const override { return "Deconvolution"; }

 protected:
  using ChunkBuffers = typename BaseConvolutionLayer<Dtype>::ChunkBuffers;
  bool ReverseDimensions() const override { return true; }
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

#endif  // CREMA_LAYERS_DECONV_LAYER_HPP_
