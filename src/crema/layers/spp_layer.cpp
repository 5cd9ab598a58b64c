#include "crema/layers/spp_layer.hpp"

#include <string>
#include <vector>

namespace crema {

template <typename Dtype>
void SPPLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& /*bottom*/,
                                 const std::vector<Blob<Dtype>*>& /*top*/) {
  pyramid_height_ = static_cast<int>(this->layer_param_.spp_param().pyramid_height());
  CREMA_LAYER_REQUIRE(pyramid_height_ > 0, "pyramid_height must be at least 1, got "
                                               << this->layer_param_.spp_param().pyramid_height());
  built_height_ = built_width_ = -1;
}

// Level l has 2^l bins per side: the kernel (and stride) is the input size
// divided by the bins, rounded up, and the rounding excess is padded about
// evenly on both sides.
template <typename Dtype>
LayerParameter SPPLayer<Dtype>::LevelParameter(int level, int height, int width) const {
  const int bins = 1 << level;
  const int kernel_h = (height + bins - 1) / bins;
  const int kernel_w = (width + bins - 1) / bins;
  const int pad_h = (kernel_h * bins - height + 1) / 2;
  const int pad_w = (kernel_w * bins - width + 1) / 2;
  CREMA_LAYER_REQUIRE(pad_h < kernel_h && pad_w < kernel_w,
                      "a " << height << "x" << width << " input is too small for pyramid level "
                           << level << " (" << bins << "x" << bins << " bins)");
  LayerParameter param;
  param.set_name(this->layer_param_.name() + "/level" + std::to_string(level));
  param.set_type("Pooling");
  param.set_phase(this->phase_);
  PoolingParameter* pooling = param.mutable_pooling_param();
  pooling->set_pool(static_cast<PoolingParameter::PoolMethod>(
      static_cast<int>(this->layer_param_.spp_param().pool())));
  pooling->set_kernel_h(kernel_h);
  pooling->set_kernel_w(kernel_w);
  pooling->set_stride_h(kernel_h);
  pooling->set_stride_w(kernel_w);
  pooling->set_pad_h(pad_h);
  pooling->set_pad_w(pad_w);
  return param;
}

template <typename Dtype>
void SPPLayer<Dtype>::BuildLevels(Blob<Dtype>* bottom) {
  levels_.clear();
  level_outputs_.clear();
  for (int level = 0; level < pyramid_height_; ++level) {
    levels_.emplace_back(
        new PoolingLayer<Dtype>(LevelParameter(level, bottom->height(), bottom->width())));
    level_outputs_.emplace_back(new Blob<Dtype>());
    levels_.back()->SetUp({bottom}, {level_outputs_.back().get()});
  }
  built_height_ = bottom->height();
  built_width_ = bottom->width();
}

template <typename Dtype>
void SPPLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                              const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->num_axes() == 4,
                      "expects a 4-D bottom (num, channels, height, width), got shape "
                          << bottom[0]->shape_string());
  if (bottom[0]->height() != built_height_ || bottom[0]->width() != built_width_) {
    BuildLevels(bottom[0]);
  } else {
    for (int level = 0; level < pyramid_height_; ++level) {
      levels_[level]->Reshape(bottom, {level_outputs_[level].get()});
    }
  }
  image_output_size_ = 0;
  for (const auto& output : level_outputs_) image_output_size_ += output->count(1);
  if (pyramid_height_ == 1) {
    top[0]->ReshapeLike(*level_outputs_[0]);
  } else {
    top[0]->Reshape(std::vector<int>{bottom[0]->num(), image_output_size_});
  }
}

template <typename Dtype>
void SPPLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  Dtype* top_data = top[0]->mutable_cpu_data();
  int level_start = 0;
  for (int level = 0; level < pyramid_height_; ++level) {
    Blob<Dtype>* output = level_outputs_[level].get();
    levels_[level]->Forward(bottom, {output});
    const int level_size = output->count(1);
    for (int n = 0; n < bottom[0]->num(); ++n) {
      cpu_copy(level_size, output->cpu_data() + n * level_size,
               top_data + n * image_output_size_ + level_start);
    }
    level_start += level_size;
  }
}

template <typename Dtype>
void SPPLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  level_bottom_.ReshapeLike(*bottom[0]);
  level_bottom_.ShareData(*bottom[0]);
  const int count = bottom[0]->count();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  cpu_set(count, Dtype(0), bottom_diff);
  const Dtype* top_diff = top[0]->cpu_diff();
  int level_start = 0;
  for (int level = 0; level < pyramid_height_; ++level) {
    Blob<Dtype>* output = level_outputs_[level].get();
    const int level_size = output->count(1);
    Dtype* output_diff = output->mutable_cpu_diff();
    for (int n = 0; n < bottom[0]->num(); ++n) {
      cpu_copy(level_size, top_diff + n * image_output_size_ + level_start,
               output_diff + n * level_size);
    }
    levels_[level]->Backward({output}, {true}, {&level_bottom_});
    cpu_axpy(count, Dtype(1), level_bottom_.cpu_diff(), bottom_diff);
    level_start += level_size;
  }
}

INSTANTIATE_CLASS(SPPLayer);
REGISTER_LAYER_CLASS(SPP);

}  // namespace crema
