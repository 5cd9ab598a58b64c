#include "crema/util/bf16_blocks.hpp"

#ifdef CREMA_DNNL

// GCC 12's AVX-512 headers pass an uninitialised vector as the unused merge
// operand of unmasked intrinsics (GCC bug 105593): a false warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstddef>

#include "crema/util/thread_pool.hpp"

namespace crema {

namespace {

constexpr int kBlock = 16;

// The kernels below are compiled for AVX-512 BF16 whatever the build's
// target; callers reach them only on CPUs that have it.
#define CREMA_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

// rows[c] holds 16 positions of channel c; afterwards rows[s] holds the 16
// channels of position s (a 16x16 transpose: pairs, quads, then 128-bit
// lanes twice).
CREMA_BF16_TARGET inline void Transpose16x16(__m512 rows[kBlock]) {
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

// One block of 16 channels of one image: in is its first channel's plane,
// out its [spatial][16] block.
CREMA_BF16_TARGET void ConvertBlock(const float* in, uint16_t* out, int spatial) {
  int s = 0;
  for (; s + kBlock <= spatial; s += kBlock) {
    __m512 rows[kBlock];
    for (int c = 0; c < kBlock; ++c)
      rows[c] = _mm512_loadu_ps(in + static_cast<size_t>(c) * spatial + s);
    Transpose16x16(rows);
    for (int k = 0; k < kBlock; k += 2) {
      const __m512bh pair = _mm512_cvtne2ps_pbh(rows[k + 1], rows[k]);
      _mm512_storeu_si512(out + static_cast<size_t>(s + k) * kBlock, (__m512i)pair);
    }
  }
  for (; s < spatial; ++s) {  // the last positions, one at a time
    float channels[kBlock];
    for (int c = 0; c < kBlock; ++c) channels[c] = in[static_cast<size_t>(c) * spatial + s];
    const __m256bh values = _mm512_cvtneps_pbh(_mm512_loadu_ps(channels));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + static_cast<size_t>(s) * kBlock),
                        (__m256i)values);
  }
}

#undef CREMA_BF16_TARGET

}  // namespace

void FloatToBlockedBf16(const float* in, uint16_t* out, int num, int channels, int spatial) {
  const int blocks = channels / kBlock;
  const size_t block_size = static_cast<size_t>(kBlock) * spatial;
  ParallelForPlanes(num * blocks, static_cast<int>(block_size), [&](int begin, int end) {
    for (int block = begin; block < end; ++block) {
      ConvertBlock(in + block * block_size, out + block * block_size, spatial);
    }
  });
}

}  // namespace crema

#endif  // CREMA_DNNL
