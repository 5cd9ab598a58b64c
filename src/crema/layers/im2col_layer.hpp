// Im2col: lays out every receptive field of the bottom as a column, the first
// step of a convolution, as a layer. The top has channels * prod(kernel)
// channels and the spatial shape a Convolution with the same parameters would
// give; num_output, group and the fillers are not used.
#ifndef CREMA_LAYERS_IM2COL_LAYER_HPP_
#define CREMA_LAYERS_IM2COL_LAYER_HPP_

#include <vector>

#include "crema/layers/base_conv_layer.hpp"

namespace crema {

template <typename Dtype>
class Im2colLayer : public BaseConvolutionLayer<Dtype> {
 public:
  explicit Im2colLayer(const LayerParameter& param) : BaseConvolutionLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Im2col"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  bool ReverseDimensions() const override { return false; }
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // Size of one image's columns in the top.
  int TopImageSize() const { return this->column_rows_ * this->output_spatial_dim_; }
};

}  // namespace crema

#endif  // CREMA_LAYERS_IM2COL_LAYER_HPP_
