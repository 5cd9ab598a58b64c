// Deconvolution on oneDNN primitives: what a Deconvolution layer with engine
// DNNL is in CPU mode in CREMA_DNNL builds, for float data. Caffe's weights
// [input channels, output channels / group, kh, kw] are read in place (a
// strided view); 2-D only, other shapes run the reference body.
#ifndef CREMA_DNNL_DNNL_DECONVOLUTION_LAYER_HPP_
#define CREMA_DNNL_DNNL_DECONVOLUTION_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/deconv_layer.hpp"

namespace crema {

template <typename Dtype>
class DnnlDeconvolutionLayer : public DeconvolutionLayer<Dtype> {
 public:
  // for_default: made for engine DEFAULT, which runs oneDNN here wherever it
  // serves (the types default_policy.hpp gives this twin at all).
  explicit DnnlDeconvolutionLayer(const LayerParameter& param, bool for_default = false);
  ~DnnlDeconvolutionLayer() override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  // Whether the current shape runs on oneDNN (else on the reference body).
  bool uses_dnnl() const { return static_cast<bool>(primitives_); }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  struct Primitives;
  void MakePrimitives(const std::vector<Blob<Dtype>*>& bottom);

  std::unique_ptr<Primitives> primitives_;
  std::vector<int> primitive_shape_;
  // oneDNN writes parameter gradients; Caffe layers add them to the diffs.
  Blob<Dtype> weight_diff_buffer_, bias_diff_buffer_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_DECONVOLUTION_LAYER_HPP_
