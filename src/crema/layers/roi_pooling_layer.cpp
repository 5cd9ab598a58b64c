#include "crema/layers/roi_pooling_layer.hpp"

#include <climits>
#include <cmath>
#include <vector>

#include "crema/layers/roi_bins.hpp"

namespace crema {

template <typename Dtype>
void ROIPoolingLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  const ROIPoolingParameter& param = this->layer_param_.roi_pooling_param();
  CREMA_LAYER_REQUIRE(param.pooled_h() > 0 && param.pooled_w() > 0,
                      "needs roi_pooling_param { pooled_h: ... pooled_w: ... }, both positive; got "
                          << param.pooled_h() << " x " << param.pooled_w());
  CREMA_LAYER_REQUIRE(
      param.pooled_h() <= INT_MAX && param.pooled_w() <= INT_MAX,
      "pooled_h " << param.pooled_h() << " x pooled_w " << param.pooled_w() << " is too large");
  CREMA_LAYER_REQUIRE(std::isfinite(param.spatial_scale()) && param.spatial_scale() > 0,
                      "spatial_scale must be positive and finite, got " << param.spatial_scale());
  pooled_h_ = static_cast<int>(param.pooled_h());
  pooled_w_ = static_cast<int>(param.pooled_w());
  spatial_scale_ = param.spatial_scale();
}

template <typename Dtype>
void ROIPoolingLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4, "bottom[0] (features) must be [N, C, H, W], got "
                                                      << bottom[0]->shape_string());
  CheckRoisShape(*bottom[1]);
  num_images_ = bottom[0]->num();
  channels_ = bottom[0]->channels();
  height_ = bottom[0]->height();
  width_ = bottom[0]->width();
  num_rois_ = bottom[1]->shape(0);
  const int64_t top_count = int64_t{num_rois_} * channels_ * pooled_h_ * pooled_w_;
  CREMA_LAYER_REQUIRE(top_count <= INT_MAX, "the top of " << num_rois_ << " ROIs x " << channels_
                                                          << " channels x " << pooled_h_ << " x "
                                                          << pooled_w_ << " bins is too large");
  top[0]->Reshape(num_rois_, channels_, pooled_h_, pooled_w_);
  const size_t argmax_bytes = static_cast<size_t>(top_count) * sizeof(int);
  if (!argmax_ || argmax_->size() < argmax_bytes) argmax_.reset(new SyncedMemory(argmax_bytes));
  const size_t cells_bytes = static_cast<size_t>(num_rois_) * sizeof(RoiCells);
  if (!roi_cells_ || roi_cells_->size() < cells_bytes) {
    roi_cells_.reset(new SyncedMemory(cells_bytes));
  }
}

template <typename Dtype>
void ROIPoolingLayer<Dtype>::MeasureAxis(Dtype low, Dtype high, int extent, int bins, int row,
                                         const char* axis, int* start, int* size) const {
  // py-faster-rcnn rounds the scaled coordinates (halves away from zero) and
  // counts both ends: an ROI from cell a to cell b spans b - a + 1 cells.
  const Dtype first = std::round(low * spatial_scale_);
  const Dtype last = std::round(high * spatial_scale_);
  CREMA_LAYER_REQUIRE(std::fabs(first) <= kMaxRoiCells && std::fabs(last) <= kMaxRoiCells,
                      "ROI " << row << " lies " << axis << " cells " << first << " to " << last
                             << " after scaling by " << spatial_scale_
                             << ", too far outside any feature map");
  CREMA_LAYER_REQUIRE(first <= last, "ROI " << row << " spans " << axis << " cells " << first
                                            << " to " << last << " after scaling by "
                                            << spatial_scale_
                                            << ": it holds no cell (ends before it starts)");
  *start = static_cast<int>(first);
  *size = static_cast<int>(last) - *start + 1;
  CREMA_LAYER_REQUIRE(OverlapsImage(low, high, extent, spatial_scale_),
                      "ROI " << row << " lies at " << axis << " " << low << " to " << high
                             << " pixels, wholly outside the image of the feature map's "
                             << extent << " cells at scale " << spatial_scale_);
}

template <typename Dtype>
void ROIPoolingLayer<Dtype>::MeasureRois(const Blob<Dtype>& rois) {
  if (num_rois_ == 0) return;
  RoiCells* cells = static_cast<RoiCells*>(roi_cells_->mutable_cpu_data());
  for (int r = 0; r < num_rois_; ++r) {
    const Dtype* roi = rois.cpu_data() + r * 5;
    cells[r].image = CheckRoiRow(roi, r, num_images_);
    MeasureAxis(roi[1], roi[3], width_, pooled_w_, r, "x", &cells[r].start_w, &cells[r].width);
    MeasureAxis(roi[2], roi[4], height_, pooled_h_, r, "y", &cells[r].start_h, &cells[r].height);
  }
}

template <typename Dtype>
void ROIPoolingLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>& top) {
  MeasureRois(*bottom[1]);
  const RoiCells* cells = static_cast<const RoiCells*>(roi_cells_->cpu_data());
  Dtype* top_data = top[0]->mutable_cpu_data();
  int* argmax = static_cast<int*>(argmax_->mutable_cpu_data());
  const int plane = height_ * width_;
  for (int r = 0; r < num_rois_; ++r) {
    const RoiCells& roi = cells[r];
    for (int c = 0; c < channels_; ++c) {
      const Dtype* features = bottom[0]->cpu_data() + (roi.image * channels_ + c) * plane;
      for (int ph = 0; ph < pooled_h_; ++ph) {
        const BinSpan rows = MaxPoolBin<Dtype>(ph, pooled_h_, roi.start_h, roi.height, height_);
        for (int pw = 0; pw < pooled_w_; ++pw) {
          const BinSpan cols = MaxPoolBin<Dtype>(pw, pooled_w_, roi.start_w, roi.width, width_);
          // The first maximum in row-major order wins a tie.
          int best = -1;
          for (int h = rows.begin; h < rows.end; ++h) {
            for (int w = cols.begin; w < cols.end; ++w) {
              const int cell = h * width_ + w;
              if (best < 0 || features[cell] > features[best]) best = cell;
            }
          }
          *top_data++ = best < 0 ? Dtype(0) : features[best];
          *argmax++ = best;
        }
      }
    }
  }
}

template <typename Dtype>
void ROIPoolingLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                          const std::vector<bool>& propagate_down,
                                          const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_set(bottom[0]->count(), Dtype(0), bottom_diff);
  if (num_rois_ == 0) return;
  const RoiCells* cells = static_cast<const RoiCells*>(roi_cells_->cpu_data());
  const Dtype* top_diff = top[0]->cpu_diff();
  const int* argmax = static_cast<const int*>(argmax_->cpu_data());
  const int bins = pooled_h_ * pooled_w_;
  const int plane = height_ * width_;
  // Summed in (ROI, bin) order for each cell, as the GPU body sums.
  for (int r = 0; r < num_rois_; ++r) {
    for (int c = 0; c < channels_; ++c) {
      Dtype* diff = bottom_diff + (cells[r].image * channels_ + c) * plane;
      for (int bin = 0; bin < bins; ++bin, ++top_diff, ++argmax) {
        if (*argmax >= 0) diff[*argmax] += *top_diff;
      }
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ROIPoolingLayer);
#endif

INSTANTIATE_CLASS(ROIPoolingLayer);
REGISTER_LAYER_CLASS(ROIPooling);

}  // namespace crema
