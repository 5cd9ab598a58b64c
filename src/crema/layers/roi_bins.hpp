// What ROIPooling and PSROIPooling share: the check of an ROI row (image
// index and coordinates) and the cells each bin of an ROI covers, written once
// for the CPU bodies and the CUDA kernels.
#ifndef CREMA_LAYERS_ROI_BINS_HPP_
#define CREMA_LAYERS_ROI_BINS_HPP_

#include <cmath>

#include "crema/blob.hpp"
#include "crema/common.hpp"

#ifdef __CUDACC__
#define CREMA_ROI_FUNCTION __host__ __device__ inline
#else
#define CREMA_ROI_FUNCTION inline
#endif

namespace crema {

// The cells [begin, end) of one axis of the feature map that a bin covers;
// empty when end <= begin.
struct BinSpan {
  int begin;
  int end;
};

CREMA_ROI_FUNCTION int ClampToExtent(int value, int extent) {
  return value < 0 ? 0 : (value > extent ? extent : value);
}

// ROIPooling (py-faster-rcnn): bin `bin` of `bins` along an axis of an ROI
// that starts at cell `start` and spans `size` cells, covers
// [floor(bin * size / bins), ceil((bin + 1) * size / bins)) + start, clipped
// to [0, extent). Neighbouring bins may share a cell.
template <typename Dtype>
CREMA_ROI_FUNCTION BinSpan MaxPoolBin(int bin, int bins, int start, int size, int extent) {
  const Dtype bin_size = static_cast<Dtype>(size) / static_cast<Dtype>(bins);
  const int begin = static_cast<int>(floor(static_cast<Dtype>(bin) * bin_size)) + start;
  const int end = static_cast<int>(ceil(static_cast<Dtype>(bin + 1) * bin_size)) + start;
  return BinSpan{ClampToExtent(begin, extent), ClampToExtent(end, extent)};
}

// PSROIPooling (R-FCN): bin `bin` of `bins` along an axis of an ROI that
// starts at `start` and is `size` long (both in feature-map cells, not
// rounded) covers [floor(bin * size / bins + start), ceil((bin + 1) * size /
// bins + start)), clipped to [0, extent).
template <typename Dtype>
CREMA_ROI_FUNCTION BinSpan AveragePoolBin(int bin, int bins, Dtype start, Dtype size, int extent) {
  const Dtype bin_size = size / static_cast<Dtype>(bins);
  const int begin = static_cast<int>(floor(static_cast<Dtype>(bin) * bin_size + start));
  const int end = static_cast<int>(ceil(static_cast<Dtype>(bin + 1) * bin_size + start));
  return BinSpan{ClampToExtent(begin, extent), ClampToExtent(end, extent)};
}

// Whether an ROI from `low` to `high` (input pixels, both ends) along an
// axis overlaps the image that a feature map of `extent` cells at
// `spatial_scale` covers, [0, extent / spatial_scale). An ROI inside the image
// whose rounded cells pass the map's last one pools to zeros, as in the forks;
// one wholly outside the image is bad input.
template <typename Dtype>
bool OverlapsImage(Dtype low, Dtype high, int extent, Dtype spatial_scale) {
  return high >= Dtype(0) && low * spatial_scale < static_cast<Dtype>(extent);
}

// A scaled ROI coordinate beyond this (in cells) is refused: no feature map
// is that large, and the bin arithmetic stays exact in float and in int.
constexpr double kMaxRoiCells = 1 << 24;

// The checks below throw an Error that Layer::SetUp and Layer::Forward
// prefix with the layer's name and type.

// Checks the rois bottom's shape: [R, 5] (further axes of size 1 allowed).
template <typename Dtype>
void CheckRoisShape(const Blob<Dtype>& rois) {
  bool trailing_ones = true;
  for (int axis = 2; axis < rois.num_axes(); ++axis) trailing_ones &= rois.shape(axis) == 1;
  CREMA_REQUIRE(
      rois.num_axes() >= 2 && rois.shape(1) == 5 && trailing_ones,
      "bottom[1] (rois) must be [R, 5] (image index, x1, y1, x2, y2), got " << rois.shape_string());
}

// Checks ROI row `row` (image index, x1, y1, x2, y2) of a batch of
// `num_images`: the index an integer in [0, num_images), the coordinates
// finite. Returns the image index.
template <typename Dtype>
int CheckRoiRow(const Dtype* roi, int row, int num_images) {
  const Dtype image = roi[0];
  CREMA_REQUIRE(
      std::isfinite(image) && image == std::floor(image) && image >= 0 && image < num_images,
      "ROI " << row << " has image index " << image << ", which is not an integer in [0, "
             << num_images << ")");
  for (int i = 1; i < 5; ++i) {
    CREMA_REQUIRE(std::isfinite(roi[i]),
                  "ROI " << row << " has a coordinate that is not finite (" << roi[i] << ")");
  }
  return static_cast<int>(image);
}

}  // namespace crema

#endif  // CREMA_LAYERS_ROI_BINS_HPP_
