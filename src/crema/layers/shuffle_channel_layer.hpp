// ShuffleChannel (farmingyard/ShuffleNet): the channels of each image, viewed
// as a (group, C / group) matrix, are transposed to (C / group, group), so top
// channel j * group + i is bottom channel i * (C / group) + j. Axis 1 holds the
// channels; the axes after it move with their channel. Backward applies the
// inverse permutation. group (shuffle_channel_param, default 1) must be
// positive and divide C.
#ifndef CREMA_LAYERS_SHUFFLE_CHANNEL_LAYER_HPP_
#define CREMA_LAYERS_SHUFFLE_CHANNEL_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class ShuffleChannelLayer : public Layer<Dtype> {
 public:
  explicit ShuffleChannelLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "ShuffleChannel"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // The channel matrix of every image, [rows][cols] of spatial_dim_ values
  // each, transposed into output ([cols][rows]). Forward has rows = group_,
  // backward rows = channels_ / group_. input and output do not overlap.
  void Transpose_cpu(const Dtype* input, int rows, Dtype* output) const;
#ifdef CREMA_CUDA
  void Transpose_gpu(const Dtype* input, int rows, Dtype* output) const;
#endif

  int group_ = 1;
  int num_ = 0;          // images: the size of axis 0
  int channels_ = 0;     // the size of axis 1
  int spatial_dim_ = 0;  // values per channel: the count of the axes after 1
  // In place, the permuted values (or gradients) go here first.
  Blob<Dtype> in_place_buffer_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_SHUFFLE_CHANNEL_LAYER_HPP_
