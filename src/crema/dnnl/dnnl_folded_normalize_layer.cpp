#include "crema/dnnl/dnnl_folded_normalize_layer.hpp"

#include <cmath>

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

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
  p->inverse_norm.resize(p->positions);
  SetUpOutput(p->blocks, p->plain);
  return true;
}

// Block b of image n holds channels b * width ... at position s in lanes
// ((n * channel_blocks + b) * positions + s) * width + lane; padded lanes
// are zero, so they add nothing to a norm, and their scale is zero.
void DnnlFoldedNormalize::Forward_cpu(const std::vector<Blob<float>*>& bottom,
                                      const std::vector<Blob<float>*>& top) {
  DnnlFoldedNormalizePrimitives& p = *primitives_;
  const int channels = bottom[0]->shape(1), width = p.width, positions = p.positions;
  const float* scale = this->blobs_[0]->cpu_data();
  const bool shared = this->layer_param_.norm_param().channel_shared();
  for (int c = 0; c < channels; ++c) p.scale[c] = scale[shared ? 0 : c];
  const float eps = this->layer_param_.norm_param().eps();
  const dnnl::memory src = Input(producer_, bottom[0], p.plain, p.src, p.src_in);
  const float* x = static_cast<const float*>(src.get_data_handle());
  const dnnl::memory dst = OutputFor(top[0]);
  float* y = static_cast<float*>(dst.get_data_handle());
  const size_t block = static_cast<size_t>(positions) * width;
  for (int n = 0; n < bottom[0]->shape(0); ++n) {
    const size_t image = static_cast<size_t>(n) * p.channel_blocks * block;
    for (int s = 0; s < positions; ++s) {
      float sums[16] = {};
      for (int b = 0; b < p.channel_blocks; ++b) {
        const float* v = x + image + b * block + static_cast<size_t>(s) * width;
        for (int lane = 0; lane < width; ++lane) sums[lane] += v[lane] * v[lane];
      }
      float sum = 0;
      for (int lane = 0; lane < width; ++lane) sum += sums[lane];
      p.inverse_norm[s] = 1.0f / std::sqrt(sum + eps);
    }
    for (int b = 0; b < p.channel_blocks; ++b) {
      const float* v = x + image + b * block;
      float* out = y + image + b * block;
      const float* g = p.scale.data() + b * width;
      for (int s = 0; s < positions; ++s) {
        const float inverse = p.inverse_norm[s];
        for (int lane = 0; lane < width; ++lane) {
          out[s * width + lane] = g[lane] * v[s * width + lane] * inverse;
        }
      }
    }
  }
  Written(top[0]);
}

template class DnnlTwin<float, NormalizeLayer, DnnlFoldedNormalizePrimitives>;

}  // namespace crema
