// BatchReindex: gathers items (slices along axis 0) of bottom[0] by the
// indices in bottom[1], a 1-D blob: top[k] = bottom[0][index[k]]. Indices may
// repeat or leave items out; the gradient of an item sums over every place it
// was gathered to. The indices get no gradient.
#ifndef CREMA_LAYERS_BATCH_REINDEX_LAYER_HPP_
#define CREMA_LAYERS_BATCH_REINDEX_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class BatchReindexLayer : public Layer<Dtype> {
 public:
  explicit BatchReindexLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "BatchReindex"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index == 0; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  // Reads bottom[1] as item indices, refusing any that is not a whole number
  // naming an item of bottom[0].
  std::vector<int> ReadIndices(const Blob<Dtype>& indices, int num_items) const;
};

}  // namespace crema

#endif  // CREMA_LAYERS_BATCH_REINDEX_LAYER_HPP_
