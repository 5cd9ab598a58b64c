#include "crema/layers/roi_bins.hpp"
#include "crema/layers/roi_pooling_layer.hpp"

namespace crema {

// The sizes a kernel needs, passed by value.
struct RoiPoolingGeometry {
  int channels, height, width;
  int pooled_h, pooled_w;
  int num_rois;
};

// One thread per output (r, c, ph, pw): the maximum over its bin, as
// Forward_cpu computes it (the first maximum in row-major order wins).
template <typename Dtype>
__global__ void RoiMaxPoolForward(const int64_t count, const Dtype* features, const RoiCells* cells,
                                  RoiPoolingGeometry g, Dtype* top, int* argmax) {
  CUDA_KERNEL_LOOP(index, count) {
    const int pw = index % g.pooled_w;
    const int ph = (index / g.pooled_w) % g.pooled_h;
    const int c = (index / g.pooled_w / g.pooled_h) % g.channels;
    const RoiCells roi = cells[index / g.pooled_w / g.pooled_h / g.channels];
    const BinSpan rows = MaxPoolBin<Dtype>(ph, g.pooled_h, roi.start_h, roi.height, g.height);
    const BinSpan cols = MaxPoolBin<Dtype>(pw, g.pooled_w, roi.start_w, roi.width, g.width);
    const Dtype* plane = features + (int64_t{roi.image} * g.channels + c) * g.height * g.width;
    int best = -1;
    for (int h = rows.begin; h < rows.end; ++h) {
      for (int w = cols.begin; w < cols.end; ++w) {
        const int cell = h * g.width + w;
        if (best < 0 || plane[cell] > plane[best]) best = cell;
      }
    }
    top[index] = best < 0 ? Dtype(0) : plane[best];
    argmax[index] = best;
  }
}

template <typename Dtype>
void ROIPoolingLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>& top) {
  MeasureRois(*bottom[1]);
  const int64_t count = top[0]->count();
  if (count == 0) return;
  const RoiPoolingGeometry g{channels_, height_, width_, pooled_h_, pooled_w_, num_rois_};
  RoiMaxPoolForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), static_cast<const RoiCells*>(roi_cells_->gpu_data()), g,
      top[0]->mutable_gpu_data(), static_cast<int*>(argmax_->mutable_gpu_data()));
  CUDA_POST_KERNEL_CHECK;
}

// The bins along one axis that may hold cell `offset` of an ROI of `size`
// cells cut into `bins`: a range one wider on each side than the exact one,
// so float rounding cannot drop a bin (the argmax test decides).
template <typename Dtype>
__device__ BinSpan BinsHolding(int offset, int size, int bins) {
  const Dtype bin_size = static_cast<Dtype>(size) / static_cast<Dtype>(bins);
  const int first = static_cast<int>(floor(static_cast<Dtype>(offset) / bin_size)) - 1;
  const int last = static_cast<int>(ceil(static_cast<Dtype>(offset + 1) / bin_size)) + 1;
  return BinSpan{ClampToExtent(first, bins), ClampToExtent(last, bins)};
}

// One thread per feature cell (n, c, h, w): the sum of the top gradients of
// the outputs that took it, over ROIs and then bins in order, as Backward_cpu
// adds them (no atomics, so the sums are reproducible).
template <typename Dtype>
__global__ void RoiMaxPoolBackward(const int64_t count, const Dtype* top_diff, const int* argmax,
                                   const RoiCells* cells, RoiPoolingGeometry g,
                                   Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, count) {
    const int w = index % g.width;
    const int h = (index / g.width) % g.height;
    const int c = (index / g.width / g.height) % g.channels;
    const int n = index / g.width / g.height / g.channels;
    const int cell = h * g.width + w;
    Dtype gradient = 0;
    for (int r = 0; r < g.num_rois; ++r) {
      const RoiCells roi = cells[r];
      if (roi.image != n) continue;
      const BinSpan rows = BinsHolding<Dtype>(h - roi.start_h, roi.height, g.pooled_h);
      const BinSpan cols = BinsHolding<Dtype>(w - roi.start_w, roi.width, g.pooled_w);
      const int64_t offset = (int64_t{r} * g.channels + c) * g.pooled_h * g.pooled_w;
      for (int ph = rows.begin; ph < rows.end; ++ph) {
        for (int pw = cols.begin; pw < cols.end; ++pw) {
          const int64_t output = offset + ph * g.pooled_w + pw;
          if (argmax[output] == cell) gradient += top_diff[output];
        }
      }
    }
    bottom_diff[index] = gradient;
  }
}

template <typename Dtype>
void ROIPoolingLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                          const std::vector<bool>& propagate_down,
                                          const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  if (count == 0) return;
  if (num_rois_ == 0) {
    gpu_set(count, Dtype(0), bottom[0]->mutable_gpu_diff());
    return;
  }
  const RoiPoolingGeometry g{channels_, height_, width_, pooled_h_, pooled_w_, num_rois_};
  RoiMaxPoolBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), static_cast<const int*>(argmax_->gpu_data()),
      static_cast<const RoiCells*>(roi_cells_->gpu_data()), g, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ROIPoolingLayer);

}  // namespace crema
