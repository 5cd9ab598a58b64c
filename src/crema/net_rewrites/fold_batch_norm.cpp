// Rewrite: a BatchNorm (the reference layer, engine DEFAULT, on stored
// statistics) in place on the blob that the next layer, a per-channel Scale,
// also works on in place folds into the Scale: FoldedBatchNormLayer and
// FusedScaleLayer replace the pair. Its seam: a forward pass that ends at
// the BatchNorm normalises there; a backward pass that ends at the Scale
// writes the Scale's own bottom gradient, not the BatchNorm's.
#include <typeinfo>

#include "crema/net_rewrites/fused_scale_layer.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"

namespace crema {

namespace {

template <typename Dtype>
bool FoldsInto(const NetGraph<Dtype>& graph, int batch_norm_id, int scale_id) {
  const Layer<Dtype>& layer = *graph.layers[batch_norm_id];
  if (typeid(layer) != typeid(BatchNormLayer<Dtype>)) return false;
  const auto& batch_norm = static_cast<const BatchNormLayer<Dtype>&>(layer);
  const auto* scale = dynamic_cast<const ScaleLayer<Dtype>*>(graph.layers[scale_id].get());
  if (!scale || !batch_norm.uses_global_stats() || batch_norm.learns_scale_bias() ||
      batch_norm.layer_param().batch_norm_param().engine() != BatchNormParameter::DEFAULT) {
    return false;
  }
  Blob<Dtype>* blob = graph.tops[batch_norm_id][0];
  return graph.bottoms[batch_norm_id][0] == blob && graph.bottoms[scale_id].size() == 1 &&
         graph.bottoms[scale_id][0] == blob && graph.tops[scale_id][0] == blob &&
         scale->ScalesChannelsOf(*blob);
}

}  // namespace

template <typename Dtype>
void FoldBatchNormsIntoScales(NetGraph<Dtype>& graph, std::vector<Seam>* seams) {
  int folded = 0;
  for (int i = 1; i < static_cast<int>(graph.layers.size()); ++i) {
    if (!FoldsInto(graph, i - 1, i)) continue;
    FoldedBatchNormLayer<Dtype>* batch_norm =
        graph.template Replace<FoldedBatchNormLayer<Dtype>>(i - 1);
    FusedScaleLayer<Dtype>* scale = graph.template Replace<FusedScaleLayer<Dtype>>(i);
    scale->FoldBatchNorm(batch_norm);
    Blob<Dtype>* blob = graph.tops[i - 1][0];
    const int batch_norm_id = i - 1;
    seams->push_back(
        {i - 1,
         i,
         [batch_norm, blob](int) { batch_norm->FinishForward(blob); },
         [scale, batch_norm_id](int end) { scale->set_fold_backward(batch_norm_id >= end); },
         {}});
    ++folded;
  }
  LOG_IF(INFO, graph.log && folded > 0)
      << "Folded " << folded << " BatchNorm layers into the Scale layers that follow them";
}

REGISTER_NET_REWRITE(kFoldIntoScales, "BatchNorm into Scale", FoldBatchNormsIntoScales);

}  // namespace crema
