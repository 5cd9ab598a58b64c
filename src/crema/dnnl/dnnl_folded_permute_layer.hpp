// A Permute from NCHW to NHWC (order: 0 2 3 1, as every SSD head's) in a net
// that runs forward (the rewrite net_rewrites/fold_into_convolutions.cpp
// makes it for TEST-phase nets in CPU mode, where its bottom comes from a
// folded layer): one oneDNN reorder from the producer's channel blocks, as
// they lie, straight into the top in Caffe's layout, instead of a move out
// of the blocks and then the permutation. Where the blocks are not the
// bottom's values (the blob changed since the producer wrote it), the same
// reorder reads the bottom. Any other order leaves ready() false and the
// caller runs the plain layer.
#ifndef CREMA_DNNL_DNNL_FOLDED_PERMUTE_LAYER_HPP_
#define CREMA_DNNL_DNNL_FOLDED_PERMUTE_LAYER_HPP_

#include <vector>

#include "crema/dnnl/folded_output.hpp"
#include "crema/layers/permute_layer.hpp"

namespace crema {

struct DnnlFoldedPermutePrimitives;
// Instantiated in the .cpp, where the primitives are complete; never here.
extern template class DnnlTwin<float, PermuteLayer, DnnlFoldedPermutePrimitives>;

class DnnlFoldedPermute : public DnnlFoldedTwin<PermuteLayer, DnnlFoldedPermutePrimitives> {
 public:
  DnnlFoldedPermute(const LayerParameter& param, const FoldedOutput* producer);

 protected:
  bool MakePrimitives(const std::vector<Blob<float>*>& bottom, const std::vector<Blob<float>*>& top,
                      DnnlFoldedPermutePrimitives* p) override;
  const char* DnnlOperation() const override { return "reorder"; }
  void Forward_cpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;

 private:
  const FoldedOutput* const producer_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_FOLDED_PERMUTE_LAYER_HPP_
