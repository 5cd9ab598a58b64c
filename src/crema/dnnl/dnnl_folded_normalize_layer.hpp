// A Normalize (SSD) of each position's channel vector (across_spatial:
// false) in a net that runs forward (the rewrite
// net_rewrites/fold_into_convolutions.cpp makes it for TEST-phase nets in
// CPU mode, where its bottom comes from a folded layer): computed on the
// producer's channel blocks as they lie, its output left in the same
// blocks for the next folded layer (folded_output.hpp), so the blob is not
// moved out of the blocks and back around it. Each position's norm is
// sqrt(sum of squares + eps), as the plain layer's; each element is
// multiplied by its channel's scale (or the one shared scale) and by the
// inverse of its norm. Where the producer's output is not in blocks of one
// vector register (DnnlActivationBlocks), or the norm is across positions,
// ready() is false and the caller runs the plain layer.
#ifndef CREMA_DNNL_DNNL_FOLDED_NORMALIZE_LAYER_HPP_
#define CREMA_DNNL_DNNL_FOLDED_NORMALIZE_LAYER_HPP_

#include <vector>

#include "crema/dnnl/folded_output.hpp"
#include "crema/layers/normalize_layer.hpp"

namespace crema {

struct DnnlFoldedNormalizePrimitives;
// Instantiated in the .cpp, where the primitives are complete; never here.
extern template class DnnlTwin<float, NormalizeLayer, DnnlFoldedNormalizePrimitives>;

class DnnlFoldedNormalize : public DnnlFoldedTwin<NormalizeLayer, DnnlFoldedNormalizePrimitives> {
 public:
  DnnlFoldedNormalize(const LayerParameter& param, const FoldedOutput* producer);

 protected:
  bool MakePrimitives(const std::vector<Blob<float>*>& bottom, const std::vector<Blob<float>*>& top,
                      DnnlFoldedNormalizePrimitives* p) override;
  const char* DnnlOperation() const override { return "normalization on channel blocks"; }
  void Forward_cpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;

 private:
  const FoldedOutput* const producer_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_FOLDED_NORMALIZE_LAYER_HPP_
