// A Pooling in a net that runs forward (the rewrite
// net_rewrites/fold_into_convolutions.cpp makes it for TEST-phase nets in
// CPU mode, where its bottom comes from a folded layer): oneDNN's inference
// pooling on the producer's blocked output as it lies, its own output left
// blocked for the next folded layer (folded_output.hpp). No argmax is kept
// (nothing runs backward from it). Where oneDNN has no form for the window
// (DnnlPoolingFormOf) or no optimised kernel, ready() is false and the
// caller runs the plain layer.
#ifndef CREMA_DNNL_DNNL_FOLDED_POOLING_LAYER_HPP_
#define CREMA_DNNL_DNNL_FOLDED_POOLING_LAYER_HPP_

#include <vector>

#include "crema/dnnl/folded_output.hpp"
#include "crema/layers/pooling_layer.hpp"

namespace crema {

struct DnnlFoldedPoolingPrimitives;
// Instantiated in the .cpp, where the primitives are complete; never here.
extern template class DnnlTwin<float, PoolingLayer, DnnlFoldedPoolingPrimitives>;

class DnnlFoldedPooling : public DnnlFoldedTwin<PoolingLayer, DnnlFoldedPoolingPrimitives> {
 public:
  DnnlFoldedPooling(const LayerParameter& param, const FoldedOutput* producer);

 protected:
  bool MakePrimitives(const std::vector<Blob<float>*>& bottom, const std::vector<Blob<float>*>& top,
                      DnnlFoldedPoolingPrimitives* p) override;
  const char* DnnlOperation() const override { return "inference pooling"; }
  void Forward_cpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;

 private:
  const FoldedOutput* const producer_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_FOLDED_POOLING_LAYER_HPP_
