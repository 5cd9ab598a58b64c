// Convolution on oneDNN primitives: what a Convolution layer with engine DNNL
// is in CPU mode in CREMA_DNNL builds, for float data (and with engine
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

namespace crema {

struct DnnlConvolutionPrimitives;

template <typename Dtype>
class DnnlConvolutionLayer : public DnnlTwin<Dtype, ConvolutionLayer, DnnlConvolutionPrimitives> {
 public:
  // for_default (engine DEFAULT): the body DefaultConvolution chooses for
  // each shape (default_policy.hpp).
  explicit DnnlConvolutionLayer(const LayerParameter& param, bool for_default = false);
  // Whether it runs on oneDNN in bf16 (compute_precision BF16 on a CPU with
  // avx512_bf16: bfloat16 operands, float results and gradients; every
  // shape oneDNN can express then runs on oneDNN, but for engine DEFAULT's
  // float choices on first layers and mostly padded channels, where bf16
  // loses).
  bool uses_bf16() const { return this->uses_dnnl() && bf16_; }
  // Whether it runs oneDNN's Winograd convolution (convolution_algorithm
  // WINOGRAD on a shape and CPU oneDNN has it for: see crema.proto).
  bool uses_winograd() const { return this->uses_dnnl() && winograd_; }
  // Asks the CPU forward passes to leave the top in oneDNN's blocked layout
  // and hand it over where they can (one bottom, a top of 16-channel blocks
  // moved by channel_blocks), for the layer that takes it (the rewrite
  // hand_blocked_output.cpp).
  BlockedOutput* HandOverOutput() {
    hand_over_output_ = true;
    return &blocked_output_;
  }
  // A pass that stops before the taker: moves a top still handed over into
  // the blob.
  void FinishHandedOutput(Blob<Dtype>* top);

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

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_CONV_LAYER_HPP_
