// Activations between Caffe's layout (nchw, float) and oneDNN's blocked
// layout of 16 channels (nChw16c, float or bfloat16), in one pass each way.
// A oneDNN convolution moves its bottom and top gradient into the blocked
// layout and its top and bottom gradient out of it at every step: a 16x16
// transpose in AVX-512 registers does it at the machine's memory bandwidth,
// which oneDNN's own reorders do not reach on these shapes.
// Channels a multiple of 16; split over the thread pool.
#ifndef CREMA_DNNL_CHANNEL_BLOCKS_HPP_
#define CREMA_DNNL_CHANNEL_BLOCKS_HPP_

#include <cstdint>

namespace crema {

// Whether this CPU runs the float conversions (AVX-512F); the bf16 one
// needs DnnlHasBf16() as well.
bool ChannelBlocksSupported();

// out[n][c / 16][s][c % 16] = in[n][c][s].
void PlainToChannelBlocks(const float* in, float* out, int num, int channels, int spatial);
// The same as bfloat16, rounded to nearest even (NaN kept NaN), as the
// CPU's conversion instruction and oneDNN's reorder round.
void PlainToChannelBlocksBf16(const float* in, uint16_t* out, int num, int channels, int spatial);
// out[n][c][s] = in[n][c / 16][s][c % 16].
void ChannelBlocksToPlain(const float* in, float* out, int num, int channels, int spatial);
// ChannelBlocksToPlain into `plain` (unless null), and in the same pass
// affine[n][c][s] = (x - shift[c]) * scale[c] + bias[c] of its value x, as a
// Scale (and a BatchNorm folded into it) computes it, bit for bit; a null
// shift or bias is left out of the formula.
void ChannelBlocksToPlainAndAffine(const float* in, float* plain, float* affine, int num,
                                   int channels, int spatial, const float* shift,
                                   const float* scale, const float* bias);

// Convolution weights (float oihw, outputs and inputs multiples of 16) to the
// bf16 layouts of oneDNN's bf16 kernels, which pair two channels in each
// 32-bit lane: a bf16 convolution converts its float weights at every step,
// twice (forward, bottom gradient). For output block ob, input block ib,
// kernel position k (of `kernel` = kh * kw), and o, i within the blocks:
//   kPairedInputs   (ABcd8b16a2b)  out[ob][ib][k][i / 2][o][i % 2]
//   kPairedOutputs  (ABcd8a16b2a)  out[ob][ib][k][o / 2][i][o % 2]
//   kPairedOutputsInputsOuter (BAcd8a16b2a)  out[ib][ob][k][o / 2][i][o % 2]
// Float convolution weights to oneDNN's float blocked layouts, and a float
// weight gradient from ABcd16b16a back to oihw. For output block ob, input
// block ib, kernel position k, and o, i within the blocks:
//   kInputRows             (ABcd16b16a)  [ob][ib][k][i][o]
//   kOutputRows            (ABcd16a16b)  [ob][ib][k][o][i]
//   kOutputRowsInputsOuter (BAcd16a16b)  [ib][ob][k][o][i]
enum class FloatWeightLayout { kInputRows, kOutputRows, kOutputRowsInputsOuter };
void WeightsToFloatBlocks(const float* in, float* out, int outputs, int inputs, int kernel,
                          FloatWeightLayout layout);
void WeightBlocksToPlain(const float* in, float* out, int outputs, int inputs, int kernel);
// As WeightBlocksToPlain, adding the gradient to `out` (a parameter's diff,
// which accumulates): one pass instead of a move and an addition.
void WeightBlocksAddToPlain(const float* in, float* out, int outputs, int inputs, int kernel);

enum class Bf16WeightLayout { kPairedInputs, kPairedOutputs, kPairedOutputsInputsOuter };
void WeightsToBf16Blocks(const float* in, uint16_t* out, int outputs, int inputs, int kernel,
                         Bf16WeightLayout layout);

}  // namespace crema

#endif  // CREMA_DNNL_CHANNEL_BLOCKS_HPP_
