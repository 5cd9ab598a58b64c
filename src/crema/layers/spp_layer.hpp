// SPP, spatial pyramid pooling: level l pools each channel plane of a 4-D
// blob into 2^l x 2^l bins; the levels' outputs, flattened per image, are
// concatenated level 0 first into a (num, channels * sum of 4^l) top. With a
// single level the top keeps the pooled shape (num, channels, 1, 1), as in
// Caffe.
#ifndef CREMA_LAYERS_SPP_LAYER_HPP_
#define CREMA_LAYERS_SPP_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layer.hpp"
#include "crema/layers/pooling_layer.hpp"

namespace crema {

template <typename Dtype>
class SPPLayer : public Layer<Dtype> {
 public:
  explicit SPPLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "SPP"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // The pooling configuration of one pyramid level for a height x width input.
  LayerParameter LevelParameter(int level, int height, int width) const;
  // (Re)creates the levels' pooling layers for the bottom's plane size.
  void BuildLevels(Blob<Dtype>* bottom);

  int pyramid_height_ = 0;
  int built_height_ = -1;
  int built_width_ = -1;
  std::vector<std::unique_ptr<PoolingLayer<Dtype>>> levels_;
  std::vector<std::unique_ptr<Blob<Dtype>>> level_outputs_;
  // Per image, the length of all levels' outputs together.
  int image_output_size_ = 0;
  // Shares the bottom's data; each level's Backward writes its gradient to
  // this diff, then it is added into the bottom's.
  Blob<Dtype> level_bottom_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_SPP_LAYER_HPP_
