#include "crema/dnnl/default_policy.hpp"

namespace crema {

bool MostlyPadding(int input_channels, int output_channels) {
  const auto padded = [](int channels) { return (channels + 15) / 16 * 16; };
  // Few input channels stay in the plain layout: only the output's blocks count.
  if (input_channels < kFewChannels) return padded(output_channels) > 1.5 * output_channels;
  return padded(input_channels) * padded(output_channels) > 1.5 * input_channels * output_channels;
}

DefaultConvolutionBody DefaultConvolution(int groups, int input_channels, int output_channels,
                                          bool pointwise, bool bf16) {
  if (groups > 1 && input_channels == 1 && output_channels == 1) {
    return DefaultConvolutionBody::kDnnl;
  }
  const bool keeps_float_choice =
      input_channels < kFewChannels || MostlyPadding(input_channels, output_channels);
  if (bf16 && !keeps_float_choice) return DefaultConvolutionBody::kDnnl;
  if (pointwise || MostlyPadding(input_channels, output_channels)) {
    return DefaultConvolutionBody::kReference;
  }
  return input_channels < kFewChannels ? DefaultConvolutionBody::kDnnlButBottomGradient
                                       : DefaultConvolutionBody::kDnnl;
}

bool FoldedWinogradPays(const ConvolutionShape& s) {
  return s.kernel_h == 3 && s.kernel_w == 3 && s.stride_h == 1 && s.stride_w == 1 &&
         s.dilation_h == 1 && s.dilation_w == 1 && s.groups == 1 &&
         s.input_channels >= kWinogradMinChannels && s.output_channels >= kWinogradMinChannels &&
         s.output_positions >= kWinogradMinPositions;
}

bool DefaultPoolingRunsDnnl(PoolingParameter::PoolMethod method, const PoolingGeometry& g) {
  return !(method == PoolingParameter::MAX && g.kernel_h == 2 && g.kernel_w == 2 &&
           g.stride_h == 2 && g.stride_w == 2 && g.pad_h == 0 && g.pad_w == 0);
}

bool DefaultReLURunsDnnl(int64_t count) { return count >= kReLUMinDnnlCount; }

bool DefaultLRNRunsDnnl(bool across_channels, Phase phase) {
  return across_channels && phase == TEST;
}

bool DefaultInnerProductRunsDnnl(bool bf16, int rows) {
  return bf16 && rows >= kInnerProductBf16MinRows;
}

}  // namespace crema
