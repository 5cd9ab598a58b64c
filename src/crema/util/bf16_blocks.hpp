// Float activations in Caffe's layout (nchw) to oneDNN's blocked bfloat16
// layout (nChw16c) in one pass. A bf16 convolution converts its bottom and
// its top gradient this way at every step; oneDNN's own reorder moved
// ResNet-50's at 16 GB/s, a 16x16 transpose in registers runs at the
// machine's bandwidth. CREMA_DNNL builds, CPUs with avx512_bf16 only.
#ifndef CREMA_UTIL_BF16_BLOCKS_HPP_
#define CREMA_UTIL_BF16_BLOCKS_HPP_

#ifdef CREMA_DNNL

#include <cstdint>

namespace crema {

// out[n][c / 16][s][c % 16] = in[n][c][s] as bfloat16, rounded to nearest
// even (NaN kept NaN) as the CPU's conversion instruction and oneDNN's
// reorder round. channels: a multiple of 16. Split over the thread pool.
// Only where DnnlHasBf16().
void FloatToBlockedBf16(const float* in, uint16_t* out, int num, int channels, int spatial);

}  // namespace crema

#endif  // CREMA_DNNL
#endif  // CREMA_UTIL_BF16_BLOCKS_HPP_
