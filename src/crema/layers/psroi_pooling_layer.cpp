#include "crema/layers/psroi_pooling_layer.hpp"

#include <climits>
#include <cmath>
#include <vector>

#include "crema/layers/roi_bins.hpp"

namespace crema {

template <typename Dtype>
void PSROIPoolingLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  const PSROIPoolingParameter& param = this->layer_param_.psroi_pooling_param();
  CREMA_LAYER_REQUIRE(param.output_dim() > 0 && param.group_size() > 0,
                      "needs psroi_pooling_param { output_dim: ... group_size: ... }, both "
                      "positive; got output_dim "
                          << param.output_dim() << " and group_size " << param.group_size());
  CREMA_LAYER_REQUIRE(std::isfinite(param.spatial_scale()) && param.spatial_scale() > 0,
                      "spatial_scale must be positive and finite, got " << param.spatial_scale());
  CREMA_LAYER_REQUIRE(
      double(param.output_dim()) * param.group_size() * param.group_size() <= INT_MAX,
      "output_dim " << param.output_dim() << " x group_size " << param.group_size()
                    << "^2 is too large");
  output_dim_ = param.output_dim();
  group_size_ = param.group_size();
  spatial_scale_ = param.spatial_scale();
}

template <typename Dtype>
void PSROIPoolingLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(
      bottom[0]->num_axes() == 4,
      "bottom[0] (score maps) must be [N, C, H, W], got " << bottom[0]->shape_string());
  const int bins = group_size_ * group_size_;
  CREMA_LAYER_REQUIRE(bottom[0]->channels() == output_dim_ * bins,
                      "bottom[0] has " << bottom[0]->channels() << " channels; output_dim "
                                       << output_dim_ << " x group_size " << group_size_
                                       << "^2 needs " << output_dim_ * bins);
  CheckRoisShape(*bottom[1]);
  num_images_ = bottom[0]->num();
  height_ = bottom[0]->height();
  width_ = bottom[0]->width();
  num_rois_ = bottom[1]->shape(0);
  CREMA_LAYER_REQUIRE(int64_t{num_rois_} * output_dim_ * bins <= INT_MAX,
                      "the top of " << num_rois_ << " ROIs x " << output_dim_ << " x "
                                    << group_size_ << " x " << group_size_ << " is too large");
  top[0]->Reshape(num_rois_, output_dim_, group_size_, group_size_);
  roi_extents_.Reshape(std::vector<int>{num_rois_, 5});
}

template <typename Dtype>
void PSROIPoolingLayer<Dtype>::MeasureAxis(Dtype low, Dtype high, int extent, int row,
                                           const char* axis, Dtype* start, Dtype* size) const {
  // R-FCN rounds the corners in input pixels, then scales: the ROI spans
  // [round(low), round(high) + 1) * spatial_scale, and at least 0.1 cells.
  const Dtype first = std::round(low);
  const Dtype last = std::round(high);
  CREMA_LAYER_REQUIRE(std::fabs(first * spatial_scale_) <= kMaxRoiCells &&
                          std::fabs((last + 1) * spatial_scale_) <= kMaxRoiCells,
                      "ROI " << row << " lies at " << axis << " " << first << " to " << last
                             << " pixels, too far outside any feature map at scale "
                             << spatial_scale_);
  CREMA_LAYER_REQUIRE(first <= last, "ROI " << row << " spans " << axis << " pixels " << first
                                            << " to " << last
                                            << ": it holds no cell (ends before it starts)");
  *start = first * spatial_scale_;
  *size = std::max((last + 1) * spatial_scale_ - *start, Dtype(0.1));
  CREMA_LAYER_REQUIRE(OverlapsImage(low, high, extent, spatial_scale_),
                      "ROI " << row << " lies at " << axis << " " << low << " to " << high
                             << " pixels, wholly outside the image of the feature map's "
                             << extent << " cells at scale " << spatial_scale_);
}

template <typename Dtype>
void PSROIPoolingLayer<Dtype>::MeasureRois(const Blob<Dtype>& rois) {
  Dtype* extents = roi_extents_.mutable_cpu_data();
  for (int r = 0; r < num_rois_; ++r, extents += 5) {
    const Dtype* roi = rois.cpu_data() + r * 5;
    extents[0] = CheckRoiRow(roi, r, num_images_);
    MeasureAxis(roi[1], roi[3], width_, r, "x", &extents[1], &extents[3]);
    MeasureAxis(roi[2], roi[4], height_, r, "y", &extents[2], &extents[4]);
  }
}

template <typename Dtype>
void PSROIPoolingLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  MeasureRois(*bottom[1]);
  const Dtype* extents = roi_extents_.cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int plane = height_ * width_;
  const int channels = bottom[0]->channels();
  for (int r = 0; r < num_rois_; ++r, extents += 5) {
    const int image = static_cast<int>(extents[0]);
    for (int c = 0; c < output_dim_; ++c) {
      for (int gh = 0; gh < group_size_; ++gh) {
        const BinSpan rows =
            AveragePoolBin<Dtype>(gh, group_size_, extents[2], extents[4], height_);
        for (int gw = 0; gw < group_size_; ++gw) {
          const BinSpan cols =
              AveragePoolBin<Dtype>(gw, group_size_, extents[1], extents[3], width_);
          const int channel = (c * group_size_ + gh) * group_size_ + gw;
          const Dtype* map = bottom[0]->cpu_data() + (image * channels + channel) * plane;
          Dtype sum = 0;
          for (int h = rows.begin; h < rows.end; ++h) {
            for (int w = cols.begin; w < cols.end; ++w) sum += map[h * width_ + w];
          }
          const int area = (rows.end - rows.begin) * (cols.end - cols.begin);
          *top_data++ = area > 0 ? sum / area : Dtype(0);
        }
      }
    }
  }
}

template <typename Dtype>
void PSROIPoolingLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_set(bottom[0]->count(), Dtype(0), bottom_diff);
  const Dtype* extents = roi_extents_.cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  const int plane = height_ * width_;
  const int channels = bottom[0]->channels();
  // Summed in ROI order for each cell, as the GPU body sums.
  for (int r = 0; r < num_rois_; ++r, extents += 5) {
    const int image = static_cast<int>(extents[0]);
    for (int c = 0; c < output_dim_; ++c) {
      for (int gh = 0; gh < group_size_; ++gh) {
        const BinSpan rows =
            AveragePoolBin<Dtype>(gh, group_size_, extents[2], extents[4], height_);
        for (int gw = 0; gw < group_size_; ++gw, ++top_diff) {
          const BinSpan cols =
              AveragePoolBin<Dtype>(gw, group_size_, extents[1], extents[3], width_);
          const int area = (rows.end - rows.begin) * (cols.end - cols.begin);
          if (area <= 0) continue;
          const Dtype share = *top_diff / area;
          const int channel = (c * group_size_ + gh) * group_size_ + gw;
          Dtype* diff = bottom_diff + (image * channels + channel) * plane;
          for (int h = rows.begin; h < rows.end; ++h) {
            for (int w = cols.begin; w < cols.end; ++w) diff[h * width_ + w] += share;
          }
        }
      }
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(PSROIPoolingLayer);
#endif

INSTANTIATE_CLASS(PSROIPoolingLayer);
REGISTER_LAYER_CLASS(PSROIPooling);

}  // namespace crema
