// Convolution on oneDNN primitives: what a Convolution layer (and a depthwise
// one, the forks' ConvolutionDepthwise and DepthwiseConvolution) with engine
// DNNL is in CPU mode in CREMA_DNNL builds, for float data (and with engine
// DEFAULT on the shapes where it is faster), in the layouts oneDNN chooses,
// with reorders from and to the blobs' plain layout at the layer's edges. It keeps
// Caffe's blobs and semantics (weights [num_output, channels / group, kh, kw],
// bias, accumulated parameter gradients) and works on the blobs' memory in
// place. The primitives are made once per bottom shape; a shape oneDNN cannot
// express (not 2-D, say) runs the reference body instead.
#ifndef CREMA_DNNL_DNNL_CONV_LAYER_HPP_
#define CREMA_DNNL_DNNL_CONV_LAYER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "crema/dnnl/blocked_output.hpp"
#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/layers/conv_layer.hpp"
#include "crema/layers/depthwise_conv_layer.hpp"

namespace crema {

struct DnnlConvolutionPrimitives;

// Reference: ConvolutionLayer or DepthwiseConvolutionLayer (whose set-up
// sets the group to the channels); both run the same body.
template <typename Dtype, template <typename> class Reference>
class DnnlConvolutionTwin : public DnnlTwin<Dtype, Reference, DnnlConvolutionPrimitives>,
                            public BlockedOutputProducer {
 public:
  explicit DnnlConvolutionTwin(const LayerParameter& param);
  // Whether it runs on oneDNN in bf16 (compute_precision BF16 on a CPU with
  // avx512_bf16: bfloat16 operands, float results and gradients; every
  // shape oneDNN can express then runs on oneDNN, but for engine DEFAULT's
  // float choices on first layers and mostly padded channels, where bf16
  // loses).
  bool uses_bf16() const { return this->uses_dnnl() && bf16_; }
  // Whether it runs oneDNN's Winograd convolution (convolution_algorithm
  // WINOGRAD on a shape and CPU oneDNN has it for: see crema.proto).
  bool uses_winograd() const { return this->uses_dnnl() && winograd_; }
  // For the layer that takes the top (the rewrite hand_blocked_output.cpp).
  BlockedOutput* HandOverOutput() override {
    hand_over_output_ = true;
    return &blocked_output_;
  }
  void FinishHandedOutput(Blob<Dtype>* top) override;

 protected:
  bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top,
                      DnnlConvolutionPrimitives* p) override;
  void PrimitivesMade() override;
  const char* DnnlOperation() const override { return "convolution"; }
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // The blobs' plain layouts into p.
  void DescribePlain(const Blob<Dtype>& bottom, const Blob<Dtype>& top,
                     DnnlConvolutionPrimitives* p) const;
  // Makes the forward and both backward primitives into p, whose plain
  // descriptors are set; throws dnnl::error where oneDNN has none.
  void MakeTrainingPrimitives(bool winograd, DnnlConvolutionPrimitives* p) const;
  // Whether WINOGRAD is asked for and the kernel is one it takes (3x3,
  // stride 1, undilated, one group, float).
  bool Winograd() const;

  // Engine DEFAULT on a first-layer shape: see DefaultConvolution.
  bool reference_for_bottom_gradient_ = false;
  bool bf16_ = false;
  bool warned_no_bf16_ = false;
  bool winograd_ = false;
  bool warned_no_winograd_ = false;
  bool hand_over_output_ = false;
  BlockedOutput blocked_output_;
  // oneDNN writes parameter gradients; Caffe layers add them to the diffs.
  Blob<Dtype> weight_diff_buffer_, bias_diff_buffer_;
};

template <typename Dtype>
using DnnlConvolutionLayer = DnnlConvolutionTwin<Dtype, ConvolutionLayer>;
template <typename Dtype>
using DnnlDepthwiseConvolutionLayer = DnnlConvolutionTwin<Dtype, DepthwiseConvolutionLayer>;

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_CONV_LAYER_HPP_
