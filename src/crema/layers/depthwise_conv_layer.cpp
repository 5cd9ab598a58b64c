#include "crema/layers/depthwise_conv_layer.hpp"

namespace crema {

namespace {

constexpr const char* kConvolutionDepthwise = "ConvolutionDepthwise";
constexpr const char* kDepthwiseConvolution = "DepthwiseConvolution";

}  // namespace

template <typename Dtype>
DepthwiseConvolutionLayer<Dtype>::DepthwiseConvolutionLayer(const LayerParameter& param)
    : ConvolutionLayer<Dtype>(param),
      type_(param.type() == kDepthwiseConvolution ? kDepthwiseConvolution : kConvolutionDepthwise) {
}

template <typename Dtype>
void DepthwiseConvolutionLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                                  const std::vector<Blob<Dtype>*>& top) {
  // ReadGeometry checks the axis and reads the channels; the base set-up
  // reads them again, with the group now set.
  this->ReadGeometry(*bottom[0]);
  SetGroupToChannels();
  ConvolutionLayer<Dtype>::LayerSetUp(bottom, top);
}

template <typename Dtype>
void DepthwiseConvolutionLayer<Dtype>::SetGroupToChannels() {
  ConvolutionParameter* param = this->layer_param_.mutable_convolution_param();
  const int channels = this->channels_;
  CREMA_LAYER_REQUIRE(channels > 0, "the bottom has no channels");
  CREMA_LAYER_REQUIRE(!param->has_group() || param->group() == static_cast<uint32_t>(channels),
                      "group " << param->group() << " differs from the " << channels
                               << " input channels (a depthwise convolution has one group per "
                                  "channel; leave group out or set it to the channels)");
  CREMA_LAYER_REQUIRE(param->num_output() % channels == 0,
                      "num_output " << param->num_output() << " must be a multiple of the "
                                    << channels << " input channels");
  param->set_group(channels);
}

// The GPU bodies are ConvolutionLayer's (conv_layer.cu): no .cu of its own.
// The engine field chooses the body as for a Convolution (layer_bodies.cpp): both
// type strings have the oneDNN twin that a grouped Convolution has.
INSTANTIATE_CLASS(DepthwiseConvolutionLayer);
REGISTER_LAYER_CLASS(DepthwiseConvolution);
REGISTER_LAYER_CREATOR(ConvolutionDepthwise, Creator_DepthwiseConvolutionLayer);

}  // namespace crema
