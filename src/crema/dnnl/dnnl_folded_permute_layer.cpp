#include "crema/dnnl/dnnl_folded_permute_layer.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"

namespace crema {

struct DnnlFoldedPermutePrimitives {
  // The bottom's dims in Caffe's layout, in the producer's blocks, and in
  // channels-last order: the top's layout, read with the bottom's dims.
  dnnl::memory::desc plain, blocks, channels_last;
  dnnl::reorder from_blocks, from_plain;
  // Channels per block where the blocks are DnnlActivationBlocks' (copied
  // by CopyBlocksToChannelsLast), else 0 (the reorder runs).
  int width = 0;
};

namespace {

// The blocks of `in` (N, C / width blocks, H * W positions, width lanes; the
// last block padded) into channels-last `out` (N, H * W, C): each
// position's channels are its blocks' lanes, one after the other. A copy
// of whole cache lines, cheaper than a oneDNN primitive call for the small
// outputs of SSD heads; split over oneDNN's OpenMP threads where large.
void CopyBlocksToChannelsLast(const float* in, float* out, int num, int channels, int positions,
                              int width) {
  const int blocks = (channels + width - 1) / width;
  const int64_t count = static_cast<int64_t>(num) * positions;
  constexpr int64_t kFloatsForOneThread = 1 << 15;
#pragma omp parallel if (count * channels > kFloatsForOneThread)
  {
    const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    for (int64_t at = count * thread / threads; at < count * (thread + 1) / threads; ++at) {
      const int64_t n = at / positions, s = at % positions;
      float* to = out + at * channels;
      for (int b = 0; b < blocks; ++b) {
        const float* from = in + ((n * blocks + b) * positions + s) * width;
        const int lanes = std::min(width, channels - b * width);
        for (int lane = 0; lane < lanes; ++lane) to[b * width + lane] = from[lane];
      }
    }
  }
}

}  // namespace

DnnlFoldedPermute::DnnlFoldedPermute(const LayerParameter& param, const FoldedOutput* producer)
    : DnnlFoldedTwin<PermuteLayer, DnnlFoldedPermutePrimitives>(param), producer_(producer) {}

bool DnnlFoldedPermute::MakePrimitives(const std::vector<Blob<float>*>& bottom,
                                       const std::vector<Blob<float>*>& /*top*/,
                                       DnnlFoldedPermutePrimitives* p) {
  const dnnl::memory::desc* produced = producer_->BlockedOutputDesc();
  if (bottom[0]->num_axes() != 4 || FullOrder(4) != std::vector<int>{0, 2, 3, 1} || !produced) {
    return false;
  }
  p->plain = PlainDesc(bottom[0]->shape());
  if (produced->dims() != p->plain.dims()) return false;
  p->blocks = *produced;
  p->channels_last = dnnl::memory::desc(p->plain.dims(), dnnl::memory::data_type::f32,
                                        dnnl::memory::format_tag::nhwc);
  p->from_blocks = dnnl::reorder(
      dnnl::reorder::primitive_desc(DnnlEngine(), p->blocks, DnnlEngine(), p->channels_last));
  p->from_plain = dnnl::reorder(
      dnnl::reorder::primitive_desc(DnnlEngine(), p->plain, DnnlEngine(), p->channels_last));
  const DnnlChannelBlocks ours = DnnlActivationBlocks();
  const bool known =
      ours.width != 0 &&
      p->blocks == dnnl::memory::desc(p->plain.dims(), dnnl::memory::data_type::f32, ours.tag);
  p->width = known ? ours.width : 0;
  return true;
}

void DnnlFoldedPermute::Forward_cpu(const std::vector<Blob<float>*>& bottom,
                                    const std::vector<Blob<float>*>& top) {
  const DnnlFoldedPermutePrimitives& p = *primitives_;
  const dnnl::memory to = Wrap(p.channels_last, top[0]->mutable_cpu_data());
  const dnnl::memory* blocks = producer_->BlockedOutput(bottom[0]);
  const bool as_laid = blocks && blocks->get_desc() == p.blocks;  // the layout made for
  if (as_laid && p.width != 0) {
    const std::vector<int>& shape = bottom[0]->shape();
    CopyBlocksToChannelsLast(static_cast<const float*>(blocks->get_data_handle()),
                             static_cast<float*>(to.get_data_handle()), shape[0], shape[1],
                             shape[2] * shape[3], p.width);
  } else if (as_laid) {
    DnnlRun(p.from_blocks, {{DNNL_ARG_FROM, *blocks}, {DNNL_ARG_TO, to}});
  } else {
    DnnlRun(p.from_plain,
            {{DNNL_ARG_FROM, Wrap(p.plain, bottom[0]->cpu_data())}, {DNNL_ARG_TO, to}});
  }
}

template class DnnlTwin<float, PermuteLayer, DnnlFoldedPermutePrimitives>;

}  // namespace crema
