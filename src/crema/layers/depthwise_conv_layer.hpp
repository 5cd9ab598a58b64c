// Depthwise convolution, the MobileNet forks' layer types "ConvolutionDepthwise"
// and "DepthwiseConvolution": a Convolution whose group is the bottom's channel
// count, so each output channel reads one input channel. num_output must be a
// multiple of the channels (num_output / channels outputs per channel). The
// weights keep Caffe's grouped layout [num_output, 1, kernel...], the layout
// of the forks' .caffemodels.
//
// The forks' prototxts give no group, or group equal to the channels (those
// converted from a grouped Convolution); any other group is refused. Set-up
// writes group = channels into the layer's parameter, so what ToProto writes
// is also a plain grouped Convolution's description.
#ifndef CREMA_LAYERS_DEPTHWISE_CONV_LAYER_HPP_
#define CREMA_LAYERS_DEPTHWISE_CONV_LAYER_HPP_

#include <vector>

#include "crema/layers/conv_layer.hpp"

namespace crema {

template <typename Dtype>
class DepthwiseConvolutionLayer : public ConvolutionLayer<Dtype> {
 public:
  // The type string is the one param names ("ConvolutionDepthwise" when it
  // names neither).
  explicit DepthwiseConvolutionLayer(const LayerParameter& param);
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return type_; }

 private:
  // Checks the given group and num_output against the bottom's channels
  // (read by ReadGeometry) and sets group to the channels.
  void SetGroupToChannels();

  const char* type_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_DEPTHWISE_CONV_LAYER_HPP_
