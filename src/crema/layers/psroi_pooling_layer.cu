#include "crema/layers/psroi_pooling_layer.hpp"
#include "crema/layers/roi_bins.hpp"

namespace crema {

// The sizes a kernel needs, passed by value.
struct PsRoiPoolingGeometry {
  int channels, height, width;
  int output_dim, group_size;
  int num_rois;
};

// One thread per output (r, c, gh, gw): the mean of channel
// (c * group_size + gh) * group_size + gw over bin (gh, gw), as Forward_cpu
// computes it.
template <typename Dtype>
__global__ void PsRoiPoolForward(const int64_t count, const Dtype* maps, const Dtype* extents,
                                 PsRoiPoolingGeometry g, Dtype* top) {
  CUDA_KERNEL_LOOP(index, count) {
    const int gw = index % g.group_size;
    const int gh = (index / g.group_size) % g.group_size;
    const int c = (index / g.group_size / g.group_size) % g.output_dim;
    const Dtype* roi = extents + index / g.group_size / g.group_size / g.output_dim * 5;
    const BinSpan rows = AveragePoolBin<Dtype>(gh, g.group_size, roi[2], roi[4], g.height);
    const BinSpan cols = AveragePoolBin<Dtype>(gw, g.group_size, roi[1], roi[3], g.width);
    const int channel = (c * g.group_size + gh) * g.group_size + gw;
    const Dtype* map =
        maps + (static_cast<int64_t>(roi[0]) * g.channels + channel) * g.height * g.width;
    Dtype sum = 0;
    for (int h = rows.begin; h < rows.end; ++h) {
      for (int w = cols.begin; w < cols.end; ++w) sum += map[h * g.width + w];
    }
    const int area = (rows.end - rows.begin) * (cols.end - cols.begin);
    top[index] = area > 0 ? sum / area : Dtype(0);
  }
}

template <typename Dtype>
void PSROIPoolingLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  MeasureRois(*bottom[1]);
  const int64_t count = top[0]->count();
  if (count == 0) return;
  const PsRoiPoolingGeometry g{bottom[0]->channels(), height_,     width_,
                               output_dim_,           group_size_, num_rois_};
  PsRoiPoolForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), roi_extents_.gpu_data(), g, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

// One thread per score-map cell (n, channel, h, w): the channel belongs to
// one output channel c and one bin (gh, gw), so the cell gets, from each ROI
// of image n whose bin (gh, gw) holds it, that output's gradient over the
// bin's area, summed in ROI order as Backward_cpu adds them (no atomics, so
// the sums are reproducible).
template <typename Dtype>
__global__ void PsRoiPoolBackward(const int64_t count, const Dtype* top_diff, const Dtype* extents,
                                  PsRoiPoolingGeometry g, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, count) {
    const int w = index % g.width;
    const int h = (index / g.width) % g.height;
    const int channel = (index / g.width / g.height) % g.channels;
    const int n = index / g.width / g.height / g.channels;
    const int gw = channel % g.group_size;
    const int gh = (channel / g.group_size) % g.group_size;
    const int c = channel / g.group_size / g.group_size;
    Dtype gradient = 0;
    for (int r = 0; r < g.num_rois; ++r) {
      const Dtype* roi = extents + r * 5;
      if (static_cast<int>(roi[0]) != n) continue;
      const BinSpan rows = AveragePoolBin<Dtype>(gh, g.group_size, roi[2], roi[4], g.height);
      const BinSpan cols = AveragePoolBin<Dtype>(gw, g.group_size, roi[1], roi[3], g.width);
      if (h < rows.begin || h >= rows.end || w < cols.begin || w >= cols.end) continue;
      const int area = (rows.end - rows.begin) * (cols.end - cols.begin);
      const int64_t output =
          ((int64_t{r} * g.output_dim + c) * g.group_size + gh) * g.group_size + gw;
      gradient += top_diff[output] / area;
    }
    bottom_diff[index] = gradient;
  }
}

template <typename Dtype>
void PSROIPoolingLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  if (count == 0) return;
  if (num_rois_ == 0) {
    gpu_set(count, Dtype(0), bottom[0]->mutable_gpu_diff());
    return;
  }
  const PsRoiPoolingGeometry g{bottom[0]->channels(), height_,     width_,
                               output_dim_,           group_size_, num_rois_};
  PsRoiPoolBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), roi_extents_.gpu_data(), g, bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(PSROIPoolingLayer);

}  // namespace crema
