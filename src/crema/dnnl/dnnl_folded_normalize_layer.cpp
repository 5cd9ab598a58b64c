#include "crema/dnnl/dnnl_folded_normalize_layer.hpp"

#include <immintrin.h>
#include <omp.h>

#include <cmath>
#include <cstdint>

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"
#include "crema/util/cpu_features.hpp"

namespace crema {

struct DnnlFoldedNormalizePrimitives {
  dnnl::memory::desc plain, blocks;
  int width = 0;           // channels per block
  int channel_blocks = 0;  // blocks per image, the last padded with zeros
  int positions = 0;       // H * W
  dnnl::memory src;        // the bottom moved into blocks, where the producer's are stale
  dnnl::reorder src_in;
  std::vector<float> scale;         // per padded channel (zeros past the channels)
  std::vector<float> inverse_norm;  // per position of one image
};

DnnlFoldedNormalize::DnnlFoldedNormalize(const LayerParameter& param, const FoldedOutput* producer)
    : DnnlFoldedTwin<NormalizeLayer, DnnlFoldedNormalizePrimitives>(param), producer_(producer) {}

bool DnnlFoldedNormalize::MakePrimitives(const std::vector<Blob<float>*>& bottom,
                                         const std::vector<Blob<float>*>& top,
                                         DnnlFoldedNormalizePrimitives* p) {
  SetUpOutput(dnnl::memory::desc(), dnnl::memory::desc());  // none until made
  const DnnlChannelBlocks blocks = DnnlActivationBlocks();
  const dnnl::memory::desc* produced = producer_->BlockedOutputDesc();
  if (this->layer_param_.norm_param().across_spatial() || bottom[0]->num_axes() != 4 ||
      blocks.width == 0 || !produced || top[0] == bottom[0]) {
    return false;
  }
  p->plain = PlainDesc(bottom[0]->shape());
  p->blocks = dnnl::memory::desc(p->plain.dims(), dnnl::memory::data_type::f32, blocks.tag);
  if (*produced != p->blocks) return false;
  p->width = blocks.width;
  p->channel_blocks = (bottom[0]->shape(1) + blocks.width - 1) / blocks.width;
  p->positions = bottom[0]->count(2);
  p->src = dnnl::memory(p->blocks, DnnlEngine());
  p->src_in =
      dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), p->plain, DnnlEngine(), p->blocks));
  p->scale.assign(static_cast<size_t>(p->channel_blocks) * p->width, 0.0f);
  SetUpOutput(p->blocks, p->plain);
  return true;
}

namespace {

// Where the blocks lie: block b of image n holds channels b * width ... at
// position s in lanes ((n * blocks + b) * positions + s) * width + lane.
// Padded lanes are zero, so they add nothing to a norm, and their scale is
// zero. Each position's channel vector is read twice: once for its norm,
// once (from the first-level cache) for the output.
struct BlockGeometry {
  int width, blocks, positions;
  size_t block() const { return static_cast<size_t>(positions) * width; }
};

void NormalizePositions(const BlockGeometry& g, const float* x, const float* scale, float eps,
                        float* y, int64_t first, int64_t end) {
  const size_t image = g.blocks * g.block();
  for (int64_t at = first; at < end; ++at) {
    const size_t base = (at / g.positions) * image + (at % g.positions) * g.width;
    float sum = 0;
    for (int b = 0; b < g.blocks; ++b) {
      const float* v = x + base + b * g.block();
      for (int lane = 0; lane < g.width; ++lane) sum += v[lane] * v[lane];
    }
    const float inverse = 1.0f / std::sqrt(sum + eps);
    for (int b = 0; b < g.blocks; ++b) {
      const float* v = x + base + b * g.block();
      for (int lane = 0; lane < g.width; ++lane) {
        y[base + b * g.block() + lane] = scale[b * g.width + lane] * v[lane] * inverse;
      }
    }
  }
}

CREMA_AVX512 void NormalizePositions16(const BlockGeometry& g, const float* x, const float* scale,
                                       float eps, float* y, int64_t first, int64_t end) {
  const size_t image = g.blocks * g.block();
  for (int64_t at = first; at < end; ++at) {
    const size_t base = (at / g.positions) * image + (at % g.positions) * 16;
    __m512 squares = _mm512_setzero_ps();
    for (int b = 0; b < g.blocks; ++b) {
      const __m512 v = _mm512_loadu_ps(x + base + b * g.block());
      squares = _mm512_fmadd_ps(v, v, squares);
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, squares);
    float sum = 0;
    for (const float lane : lanes) sum += lane;
    const __m512 inverse = _mm512_set1_ps(1.0f / std::sqrt(sum + eps));
    for (int b = 0; b < g.blocks; ++b) {
      const __m512 v = _mm512_loadu_ps(x + base + b * g.block());
      const __m512 factor = _mm512_mul_ps(_mm512_loadu_ps(scale + b * 16), inverse);
      _mm512_storeu_ps(y + base + b * g.block(), _mm512_mul_ps(v, factor));
    }
  }
}

}  // namespace

void DnnlFoldedNormalize::Forward_cpu(const std::vector<Blob<float>*>& bottom,
                                      const std::vector<Blob<float>*>& top) {
  DnnlFoldedNormalizePrimitives& p = *primitives_;
  const int channels = bottom[0]->shape(1);
  const float* scale = this->blobs_[0]->cpu_data();
  const bool shared = this->layer_param_.norm_param().channel_shared();
  for (int c = 0; c < channels; ++c) p.scale[c] = scale[shared ? 0 : c];
  const float eps = this->layer_param_.norm_param().eps();
  const float* x = static_cast<const float*>(
      Input(producer_, bottom[0], p.plain, p.src, p.src_in).get_data_handle());
  float* y = static_cast<float*>(OutputFor(top[0]).get_data_handle());
  const BlockGeometry g{p.width, p.channel_blocks, p.positions};
  // Positions split evenly over oneDNN's OpenMP threads (the ones the
  // primitives before and after run on: no other pool competes for the
  // cores).
  const int64_t count = static_cast<int64_t>(bottom[0]->shape(0)) * p.positions;
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const int64_t first = count * thread / threads, end = count * (thread + 1) / threads;
    if (g.width == 16) {
      NormalizePositions16(g, x, p.scale.data(), eps, y, first, end);
    } else {
      NormalizePositions(g, x, p.scale.data(), eps, y, first, end);
    }
  }
  Written(top[0]);
}

template class DnnlTwin<float, NormalizeLayer, DnnlFoldedNormalizePrimitives>;

}  // namespace crema
