// An Eltwise of two bottoms in a net that runs forward (the rewrite
// net_rewrites/fold_into_convolutions.cpp makes it for TEST-phase nets in
// CPU mode, where a bottom comes from a folded layer), with the ReLU or
// ReLU6 in place after it folded in: oneDNN's binary primitive (SUM with
// coefficients 1: add; PROD: multiply; MAX: maximum) with the activation
// as its post-op, on the producers' blocked outputs as they lie, its own
// output left blocked for the next folded layer (folded_output.hpp). Where
// oneDNN has no optimised kernel for it, ready() is false and the caller
// runs the plain layers.
//
// Where one bottom is a folded convolution's output that only this layer
// reads (a ResNet block's last convolution), the operation and activation
// run as post-ops of that convolution (FuseConvolution): the convolution's
// output is never written to memory and read back. The convolution's pass
// leaves its output pending (folded_output.hpp), computed only if read.
#ifndef CREMA_DNNL_DNNL_FOLDED_ELTWISE_LAYER_HPP_
#define CREMA_DNNL_DNNL_FOLDED_ELTWISE_LAYER_HPP_

#include <vector>

#include "crema/dnnl/dnnl_folded_conv_layer.hpp"
#include "crema/dnnl/folded_output.hpp"
#include "crema/layers/eltwise_layer.hpp"

namespace crema {

struct DnnlFoldedEltwisePrimitives;
// Instantiated in the .cpp, where the primitives are complete; never here.
extern template class DnnlTwin<float, EltwiseLayer, DnnlFoldedEltwisePrimitives>;

class DnnlFoldedEltwise : public DnnlFoldedTwin<EltwiseLayer, DnnlFoldedEltwisePrimitives> {
 public:
  // producers: each bottom's folded producer, or null.
  DnnlFoldedEltwise(const LayerParameter& param, std::vector<const FoldedOutput*> producers,
                    const FoldedActivation& activation);
  // Whether a layer of this parameter and these bottoms folds: two bottoms,
  // SUM with coefficients 1, PROD or MAX.
  static bool Folds(const LayerParameter& param, int bottoms);
  // Computes `convolution` (the producer of bottom `bottom`, whose output
  // only this layer reads) fused with its own pass, for each shape oneDNN
  // has a kernel for; calls convolution->LeaveOutputToReader for each shape.
  void FuseConvolution(DnnlFoldedConvolution<ConvolutionLayer>* convolution, int bottom);

 protected:
  bool MakePrimitives(const std::vector<Blob<float>*>& bottom, const std::vector<Blob<float>*>& top,
                      DnnlFoldedEltwisePrimitives* p) override;
  const char* DnnlOperation() const override { return "inference binary operation"; }
  void Forward_cpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;

 private:
  // The fused primitive into p, where oneDNN has one for the shapes;
  // returns whether it made one.
  bool MakeFused(const dnnl::memory::desc& layout, DnnlFoldedEltwisePrimitives* p);

  const std::vector<const FoldedOutput*> producers_;
  const FoldedActivation activation_;
  DnnlFoldedConvolution<ConvolutionLayer>* convolution_ = nullptr;
  int fused_bottom_ = 0;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_FOLDED_ELTWISE_LAYER_HPP_
