// Deconvolution on oneDNN primitives: what a Deconvolution layer with engine
// DNNL is in CPU mode in CREMA_DNNL builds, for float data. Caffe's weights
// [input channels, output channels / group, kh, kw] are read in place (a
// strided view); 2-D only, other shapes run the reference body.
#ifndef CREMA_DNNL_DNNL_DECONVOLUTION_LAYER_HPP_
#define CREMA_DNNL_DNNL_DECONVOLUTION_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/deconv_layer.hpp"

namespace crema {

struct DnnlDeconvolutionPrimitives;

template <typename Dtype>
class DnnlDeconvolutionLayer
    : public DnnlTwin<Dtype, DeconvolutionLayer, DnnlDeconvolutionPrimitives> {
 public:
  explicit DnnlDeconvolutionLayer(const LayerParameter& param);

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlDeconvolutionPrimitives* p) override;
  void PrimitivesMade() override;
  const char* DnnlOperation() const override { return "deconvolution"; }
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // oneDNN writes parameter gradients; Caffe layers add them to the diffs.
  Blob<Dtype> weight_diff_buffer_, bias_diff_buffer_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_DECONVOLUTION_LAYER_HPP_
