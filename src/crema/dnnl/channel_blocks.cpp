#include "crema/dnnl/channel_blocks.hpp"

// GCC 12's AVX-512 headers pass an uninitialised vector as the unused merge
// operand of unmasked intrinsics (GCC bug 105593): a false warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "crema/util/cpu_features.hpp"
#include "crema/util/thread_pool.hpp"

namespace crema {

namespace {

constexpr int kBlock = 16;

// The kernels are compiled for AVX-512 whatever the build's target
// (util/cpu_features.hpp); callers reach them only on CPUs that have it
// (ChannelBlocksSupported, DnnlHasBf16).

// rows[r] holds 16 values of row r; afterwards rows[k] holds the k-th value
// of every row (a 16x16 transpose: pairs, quads, then 128-bit lanes twice).
CREMA_AVX512 inline void Transpose16x16(__m512 rows[kBlock]) {
  __m512 t[kBlock], u[kBlock];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      t[8 * i + j] = _mm512_shuffle_f32x4(u[8 * i + j], u[8 * i + 4 + j], 0x88);
      t[8 * i + 4 + j] = _mm512_shuffle_f32x4(u[8 * i + j], u[8 * i + 4 + j], 0xdd);
    }
  }
  for (int j = 0; j < 8; ++j) {
    rows[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    rows[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
  }
}

// One block of 16 channels of one image. `planes` is its first channel's
// plane (stride `spatial`), `block` its [spatial][16] block. Positions come
// 16 at a time, through a register transpose; the last 1-15 the same way,
// with masked loads and stores.
CREMA_AVX512 inline __mmask16 FirstLanes(int count) {
  return static_cast<__mmask16>((1u << count) - 1);
}

CREMA_AVX512 inline void LoadPlanes(const float* planes, int spatial, int s, int count,
                                    __m512 rows[kBlock]) {
  const __mmask16 mask = FirstLanes(count);
  for (int c = 0; c < kBlock; ++c) {
    rows[c] = _mm512_maskz_loadu_ps(mask, planes + size_t(c) * spatial + s);
  }
  Transpose16x16(rows);  // rows[k]: the 16 channels of position s + k
}

CREMA_AVX512 void PlanesToBlock(const float* planes, float* block, int spatial) {
  for (int s = 0; s < spatial; s += kBlock) {
    const int count = spatial - s < kBlock ? spatial - s : kBlock;
    __m512 rows[kBlock];
    LoadPlanes(planes, spatial, s, count, rows);
    for (int k = 0; k < count; ++k) _mm512_storeu_ps(block + size_t(s + k) * kBlock, rows[k]);
  }
}

CREMA_AVX512_BF16 void PlanesToBlockBf16(const float* planes, uint16_t* block, int spatial) {
  for (int s = 0; s < spatial; s += kBlock) {
    const int count = spatial - s < kBlock ? spatial - s : kBlock;
    __m512 rows[kBlock];
    LoadPlanes(planes, spatial, s, count, rows);
    int k = 0;
    for (; k + 2 <= count; k += 2) {  // two positions per conversion
      const __m512bh pair = _mm512_cvtne2ps_pbh(rows[k + 1], rows[k]);
      _mm512_storeu_si512(block + size_t(s + k) * kBlock, (__m512i)pair);
    }
    if (k < count) {
      const __m256bh last = _mm512_cvtneps_pbh(rows[k]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(block + size_t(s + k) * kBlock),
                          (__m256i)last);
    }
  }
}

// rows[c] = channel c of a block at positions s..s+count-1 (zeros after).
CREMA_AVX512 inline void LoadBlockAsPlanes(const float* block, int s, int count,
                                           __m512 rows[kBlock]) {
  for (int k = 0; k < kBlock; ++k) {
    rows[k] = k < count ? _mm512_loadu_ps(block + size_t(s + k) * kBlock) : _mm512_setzero_ps();
  }
  Transpose16x16(rows);
}

// `stream`: for data read again only much later (a Scale's kept copy, read
// by its backward pass), whole aligned lines go straight to memory
// (non-temporal stores), neither read into the cache first nor evicting
// what the next layers read.
CREMA_AVX512 void BlockToPlanes(const float* block, float* planes, int spatial, bool stream) {
  for (int s = 0; s < spatial; s += kBlock) {
    const int count = spatial - s < kBlock ? spatial - s : kBlock;
    __m512 rows[kBlock];
    LoadBlockAsPlanes(block, s, count, rows);
    const __mmask16 mask = FirstLanes(count);
    for (int c = 0; c < kBlock; ++c) {
      float* line = planes + size_t(c) * spatial + s;
      if (stream && count == kBlock && reinterpret_cast<uintptr_t>(line) % 64 == 0) {
        _mm512_stream_ps(line, rows[c]);
      } else {
        _mm512_mask_storeu_ps(line, mask, rows[c]);
      }
    }
  }
  if (stream) _mm_sfence();  // the streamed lines are seen by every thread before the pool's join
}

// BlockToPlanes, and the block's affine map to `affine` planes: per lane
// (channel) c, (x - shift[c]) * scale[c] + bias[c], with shift and bias left
// out where absent. Each vector holds one position's 16 channels, so the map
// works on the block as it lies; the rounded operations (no fused
// multiply-add) give what Crema's scalar code gives. Two sweeps, the second
// reading the block from the core's cache: one stream of 16 planes at a
// time writes faster than two.
CREMA_AVX512 void BlockToPlanesAndAffine(const float* block, float* planes, float* affine,
                                         int spatial, const float* shift, const float* scale,
                                         const float* bias) {
  if (planes) BlockToPlanes(block, planes, spatial, true);
  constexpr int kExact = _MM_FROUND_CUR_DIRECTION;
  const __m512 m = shift ? _mm512_loadu_ps(shift) : _mm512_setzero_ps();
  const __m512 k = _mm512_loadu_ps(scale);
  const __m512 b = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  for (int s = 0; s < spatial; s += kBlock) {
    const int count = spatial - s < kBlock ? spatial - s : kBlock;
    __m512 rows[kBlock];
    for (int p = 0; p < kBlock; ++p) {
      __m512 x = p < count ? _mm512_loadu_ps(block + size_t(s + p) * kBlock) : _mm512_setzero_ps();
      if (shift) x = _mm512_sub_round_ps(x, m, kExact);
      x = _mm512_mul_round_ps(x, k, kExact);
      if (bias) x = _mm512_add_round_ps(x, b, kExact);
      rows[p] = x;
    }
    Transpose16x16(rows);  // rows[c]: channel c at positions s..s+15
    const __mmask16 mask = FirstLanes(count);
    for (int c = 0; c < kBlock; ++c) {
      _mm512_mask_storeu_ps(affine + size_t(c) * spatial + s, mask, rows[c]);
    }
  }
}

CREMA_AVX512 inline __m512i Strided(int stride) {
  return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm512_set1_epi32(stride));
}

// A 16x16 tile of weights whose rows are contiguous in oihw but whose lanes
// lie a whole output's weights apart (the input-paired and input-row layouts
// of a 1x1 kernel): rows[r] = the 16 values first[r + l * lane_stride], read
// as 16 contiguous lines and transposed. Gathering them instead touches 16
// cache lines on as many pages per row, several times slower. With a larger
// kernel the gathers of neighbouring kernel positions share their lines,
// and gathering is as fast.
CREMA_AVX512 inline bool ContiguousRows(int row_stride, int lane_stride) {
  return row_stride == 1 && lane_stride > 1;
}

CREMA_AVX512 inline void LoadContiguousRows(const float* first, int lane_stride,
                                            __m512 rows[kBlock]) {
  for (int l = 0; l < kBlock; ++l) rows[l] = _mm512_loadu_ps(first + size_t(l) * lane_stride);
  Transpose16x16(rows);
}

// One 16x16 tile of weights (one output block, one input block, one kernel
// position) in a paired layout: out row r (32 bf16) interleaves lines 2r and
// 2r+1 of the tile, a line being the 16 values of one channel of the paired
// side across the other side's 16 channels. `first` is the tile's first
// weight in oihw; `pair_stride` and `lane_stride` step the paired and the
// other side's channel there.
// Lines `even` and `odd` of a paired tile as out row r.
CREMA_AVX512_BF16 inline void StorePair(__m512 even, __m512 odd, uint16_t* row) {
  // bf16 lane j of the pair's halves: even j from the first line, odd from
  // the second (cvtne2ps puts the second argument's values first).
  const __m512i interleave =
      _mm512_setr_epi32(0x00100000, 0x00110001, 0x00120002, 0x00130003, 0x00140004, 0x00150005,
                        0x00160006, 0x00170007, 0x00180008, 0x00190009, 0x001a000a, 0x001b000b,
                        0x001c000c, 0x001d000d, 0x001e000e, 0x001f000f);
  const __m512i halves = (__m512i)_mm512_cvtne2ps_pbh(odd, even);
  _mm512_storeu_si512(row, _mm512_permutexvar_epi16(interleave, halves));
}

CREMA_AVX512_BF16 void WeightTileToBf16(const float* first, int pair_stride, int lane_stride,
                                        uint16_t* out) {
  if (ContiguousRows(pair_stride, lane_stride)) {
    __m512 lines[kBlock];
    LoadContiguousRows(first, lane_stride, lines);
    for (int r = 0; r < kBlock / 2; ++r) {
      StorePair(lines[2 * r], lines[2 * r + 1], out + size_t(r) * 2 * kBlock);
    }
    return;
  }
  const __m512i lanes = Strided(lane_stride);
  for (int r = 0; r < kBlock / 2; ++r) {
    const float* even = first + size_t(2 * r) * pair_stride;
    const float* odd = even + pair_stride;
    StorePair(lane_stride == 1 ? _mm512_loadu_ps(even) : _mm512_i32gather_ps(lanes, even, 4),
              lane_stride == 1 ? _mm512_loadu_ps(odd) : _mm512_i32gather_ps(lanes, odd, 4),
              out + size_t(r) * 2 * kBlock);
  }
}

// One 16x16 tile of weights as 16 rows of 16 floats: row r, lane l from
// first + r * row_stride + l * lane_stride.
CREMA_AVX512 void WeightTileToFloat(const float* first, int row_stride, int lane_stride,
                                    float* out) {
  if (ContiguousRows(row_stride, lane_stride)) {
    __m512 rows[kBlock];
    LoadContiguousRows(first, lane_stride, rows);
    for (int r = 0; r < kBlock; ++r) _mm512_storeu_ps(out + r * kBlock, rows[r]);
    return;
  }
  const __m512i lanes = Strided(lane_stride);
  for (int r = 0; r < kBlock; ++r) {
    const float* row = first + size_t(r) * row_stride;
    const __m512 values =
        lane_stride == 1 ? _mm512_loadu_ps(row) : _mm512_i32gather_ps(lanes, row, sizeof(float));
    _mm512_storeu_ps(out + r * kBlock, values);
  }
}

// One 16x16 tile of ABcd16b16a (rows: input channels, lanes: outputs) to
// oihw from `first` (output o at o * output_stride, input i at i * kernel),
// written over what is there or added to it.
CREMA_AVX512 void WeightTileToPlain(const float* tile, float* first, int output_stride, int kernel,
                                    bool add) {
  __m512 rows[kBlock];
  for (int i = 0; i < kBlock; ++i) rows[i] = _mm512_loadu_ps(tile + i * kBlock);
  Transpose16x16(rows);  // rows[o]: output o's 16 inputs
  const __m512i inputs =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(kernel));
  for (int o = 0; o < kBlock; ++o) {
    float* line = first + size_t(o) * output_stride;
    if (kernel == 1) {
      if (add) rows[o] = _mm512_add_ps(_mm512_loadu_ps(line), rows[o]);
      _mm512_storeu_ps(line, rows[o]);
    } else {
      if (add) rows[o] = _mm512_add_ps(_mm512_i32gather_ps(inputs, line, sizeof(float)), rows[o]);
      _mm512_i32scatter_ps(line, inputs, rows[o], sizeof(float));
    }
  }
}

// Calls body(offset) for every block of 16 channels of every image: both
// layouts put block b (image b / blocks, channels 16 * (b % blocks) on) at
// the offset b * 16 * spatial.
template <typename Body>
void ForEachBlock(int num, int channels, int spatial, const Body& body) {
  const size_t block_size = size_t(kBlock) * spatial;
  ParallelForPlanes(num * (channels / kBlock), static_cast<int>(block_size),
                    [&](int begin, int end) {
                      for (int b = begin; b < end; ++b) body(b * block_size);
                    });
}

// Calls body(first, at) for every 16x16 tile of the oihw `weights` (an output
// block, an input block, a kernel position): `first` is the tile's first
// weight there, `at` where the tile goes in a blocked layout of output blocks
// outside input blocks, or input blocks outside (inputs_outer), kernel
// positions inside both.
template <typename Weight, typename Body>
void ForEachWeightTile(Weight* weights, int outputs, int inputs, int kernel, bool inputs_outer,
                       const Body& body) {
  const int output_blocks = outputs / kBlock, input_blocks = inputs / kBlock;
  const size_t tile = size_t(kBlock) * kBlock;
  ParallelForPlanes(
      output_blocks * input_blocks, static_cast<int>(tile) * kernel, [&](int begin, int end) {
        for (int b = begin; b < end; ++b) {
          const int ob = b / input_blocks, ib = b % input_blocks;
          const size_t outer =
              inputs_outer ? size_t(ib) * output_blocks + ob : size_t(ob) * input_blocks + ib;
          Weight* first = weights + (size_t(ob) * kBlock * inputs + size_t(ib) * kBlock) * kernel;
          for (int k = 0; k < kernel; ++k) body(first + k, (outer * kernel + k) * tile);
        }
      });
}

// The oihw weights `in` to a blocked layout, tile by tile: move(first,
// row_stride, lane_stride, out) with a tile's rows along its input channels
// (input_rows) or its output channels, lanes along the other.
template <typename Out, typename Move>
void MoveWeightTiles(const float* in, Out* out, int outputs, int inputs, int kernel,
                     bool input_rows, bool inputs_outer, Move move) {
  const int output_stride = inputs * kernel, input_stride = kernel;
  ForEachWeightTile(in, outputs, inputs, kernel, inputs_outer, [&](const float* first, size_t at) {
    move(first, input_rows ? input_stride : output_stride,
         input_rows ? output_stride : input_stride, out + at);
  });
}

}  // namespace

void WeightsToBf16Blocks(const float* in, uint16_t* out, int outputs, int inputs, int kernel,
                         Bf16WeightLayout layout) {
  MoveWeightTiles(in, out, outputs, inputs, kernel, layout == Bf16WeightLayout::kPairedInputs,
                  layout == Bf16WeightLayout::kPairedOutputsInputsOuter, WeightTileToBf16);
}

void WeightsToFloatBlocks(const float* in, float* out, int outputs, int inputs, int kernel,
                          FloatWeightLayout layout) {
  MoveWeightTiles(in, out, outputs, inputs, kernel, layout == FloatWeightLayout::kInputRows,
                  layout == FloatWeightLayout::kOutputRowsInputsOuter, WeightTileToFloat);
}

void WeightBlocksToPlain(const float* in, float* out, int outputs, int inputs, int kernel) {
  ForEachWeightTile(out, outputs, inputs, kernel, false, [&](float* first, size_t at) {
    WeightTileToPlain(in + at, first, inputs * kernel, kernel, false);
  });
}

void WeightBlocksAddToPlain(const float* in, float* out, int outputs, int inputs, int kernel) {
  ForEachWeightTile(out, outputs, inputs, kernel, false, [&](float* first, size_t at) {
    WeightTileToPlain(in + at, first, inputs * kernel, kernel, true);
  });
}

bool ChannelBlocksSupported() { return HasAvx512(); }

void PlainToChannelBlocks(const float* in, float* out, int num, int channels, int spatial) {
  ForEachBlock(num, channels, spatial,
               [&](size_t at) { PlanesToBlock(in + at, out + at, spatial); });
}

void PlainToChannelBlocksBf16(const float* in, uint16_t* out, int num, int channels, int spatial) {
  ForEachBlock(num, channels, spatial,
               [&](size_t at) { PlanesToBlockBf16(in + at, out + at, spatial); });
}

void ChannelBlocksToPlain(const float* in, float* out, int num, int channels, int spatial) {
  ForEachBlock(num, channels, spatial,
               [&](size_t at) { BlockToPlanes(in + at, out + at, spatial, false); });
}

void ChannelBlocksToPlainAndAffine(const float* in, float* plain, float* affine, int num,
                                   int channels, int spatial, const float* shift,
                                   const float* scale, const float* bias) {
  const int blocks = channels / kBlock;
  ForEachBlock(num, channels, spatial, [&](size_t at) {
    const int first = static_cast<int>(at / (size_t(kBlock) * spatial)) % blocks * kBlock;
    BlockToPlanesAndAffine(in + at, plain ? plain + at : nullptr, affine + at, spatial,
                           shift ? shift + first : nullptr, scale + first,
                           bias ? bias + first : nullptr);
  });
}

}  // namespace crema
