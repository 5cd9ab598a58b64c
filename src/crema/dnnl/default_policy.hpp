// Engine DEFAULT in CPU mode, shape by shape: the rules a oneDNN twin made
// for engine DEFAULT asks when it makes its primitives, each from
// scripts/bench/engines.sh's measurements (docs/bench-report.md). Whether
// DEFAULT takes a type's oneDNN twin at all is that twin's registration
// (REGISTER_DNNL_BODY, dnnl_twin.hpp): Convolution (and the forks' depthwise
// types), Pooling, ReLU, LRN, InnerProduct and Softmax yes, per shape below;
// Eltwise, Deconvolution and BatchNorm no.
#ifndef CREMA_DNNL_DEFAULT_POLICY_HPP_
#define CREMA_DNNL_DEFAULT_POLICY_HPP_

#include <cstdint>

#include "crema/layers/pooling_layer.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

// Convolution, per group's input and output channels. A depthwise kernel
// (several groups of one input and one output channel) runs oneDNN, whose
// depthwise kernels block 16 groups together and beat the reference body's
// loop over groups, forward and backward. Otherwise (a channel multiplier
// above 1 too, which oneDNN runs as grouped GEMMs): oneDNN's blocked layouts hold a group's
// channels in blocks of 16: where they would be mostly padding, or for a pointwise kernel (one GEMM
// over the input as it lies), the reference body is faster. A first layer (fewer input channels
// than a block; its input stays plain) runs oneDNN for the forward pass and the weight gradient
// only: its bottom gradient is slow there. In bf16 oneDNN runs wherever float would not keep its
// choice.
enum class DefaultConvolutionBody { kReference, kDnnl, kDnnlButBottomGradient };
constexpr int kFewChannels = 16;
DefaultConvolutionBody DefaultConvolution(int groups, int input_channels, int output_channels,
                                          bool pointwise, bool bf16);
// Whether oneDNN's 16-channel blocks would be mostly padding: more than 1.5x
// the channels of input and output (of the output alone for a first layer).
bool MostlyPadding(int input_channels, int output_channels);

// A folded convolution (a net that runs forward) of a layer that asks for
// Winograd (convolution_algorithm: WINOGRAD, opt-in) runs oneDNN's Winograd
// kernels where they were faster than its direct ones: 3x3 windows at
// stride 1, undilated, one group, of at least 64 input and 64 output
// channels on output planes of at least 256 positions; not on SSD heads of
// few outputs, nor on planes of 10x10 and less.
struct ConvolutionShape {
  int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int groups, input_channels, output_channels, output_positions;
};
constexpr int kWinogradMinChannels = 64;
constexpr int kWinogradMinPositions = 256;
bool FoldedWinogradPays(const ConvolutionShape& shape);

// Pooling: oneDNN but for unpadded 2x2 max windows at stride 2, for which
// the reference body has a faster kernel of its own (LeNet's).
bool DefaultPoolingRunsDnnl(PoolingParameter::PoolMethod method, const PoolingGeometry& geometry);

// ReLU: oneDNN from this many values on; below, a call costs more than the
// reference loop.
constexpr int64_t kReLUMinDnnlCount = int64_t(1) << 17;
bool DefaultReLURunsDnnl(int64_t count);

// LRN: oneDNN only across channels in a TEST-phase net (forward only): its
// backward pass on Caffe's layout, and its within-channel forward, are
// slower than the reference body.
bool DefaultLRNRunsDnnl(bool across_channels, Phase phase);

// InnerProduct: the reference body in float (oneDNN's weight gradient is
// slower); oneDNN in bf16 from this many rows on: below, the layer streams
// its weights more than it computes and bf16's conversions cost more than
// its products save.
constexpr int kInnerProductBf16MinRows = 192;
bool DefaultInnerProductRunsDnnl(bool bf16, int rows);

}  // namespace crema

#endif  // CREMA_DNNL_DEFAULT_POLICY_HPP_
