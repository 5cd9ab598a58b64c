// Rewrite: a per-channel Scale in place on a one-bottom oneDNN convolution's
// top (right after it, or after a BatchNorm folded into it) takes the
// convolution's output in oneDNN's blocked layout (FusedScaleLayer::
// TakeBottomFrom, DnnlConvolutionLayer::HandOverOutput). Its seam: a forward
// pass that ends between the two has the convolution finish the move into
// the blob.
#include <typeinfo>

#include "crema/dnnl/dnnl_conv_layer.hpp"
#include "crema/net_rewrites/fused_scale_layer.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"

namespace crema {

namespace {

// The oneDNN convolution `layer` is, or null (float nets only: oneDNN layers
// are float).
template <typename Dtype>
DnnlConvolutionLayer<Dtype>* AsDnnlConvolution(Layer<Dtype>* layer) {
  return nullptr;
}

#ifdef CREMA_DNNL
template <>
DnnlConvolutionLayer<float>* AsDnnlConvolution(Layer<float>* layer) {
  return typeid(*layer) == typeid(DnnlConvolutionLayer<float>)
             ? static_cast<DnnlConvolutionLayer<float>*>(layer)
             : nullptr;
}
#endif

// The Scale's producer: the layer before it, or the one before a folded
// BatchNorm between them.
template <typename Dtype>
int ProducerThroughFold(const NetGraph<Dtype>& graph, int scale_id) {
  const bool after_fold =
      scale_id >= 2 && dynamic_cast<FoldedBatchNormLayer<Dtype>*>(graph.layers[scale_id - 1].get());
  return after_fold ? scale_id - 2 : scale_id - 1;
}

}  // namespace

template <typename Dtype>
void HandBlockedOutputsToScales(NetGraph<Dtype>& graph,
                                std::vector<typename Net<Dtype>::Seam>* seams) {
  int handed = 0;
  for (int i = 1; i < static_cast<int>(graph.layers.size()); ++i) {
    const auto* plain = dynamic_cast<ScaleLayer<Dtype>*>(graph.layers[i].get());
    if (!plain) continue;
    const int producer = ProducerThroughFold(graph, i);
    DnnlConvolutionLayer<Dtype>* convolution =
        producer >= 0 ? AsDnnlConvolution(graph.layers[producer].get()) : nullptr;
    if (!convolution || graph.bottoms[producer].size() != 1 || graph.tops[producer].size() != 1) {
      continue;
    }
    Blob<Dtype>* blob = graph.tops[producer][0];
    if (graph.bottoms[i].size() != 1 || graph.bottoms[i][0] != blob || graph.tops[i][0] != blob ||
        !plain->ScalesChannelsOf(*blob)) {
      continue;
    }
    auto* scale = dynamic_cast<FusedScaleLayer<Dtype>*>(graph.layers[i].get());
    if (!scale) scale = graph.template Replace<FusedScaleLayer<Dtype>>(i);
    scale->TakeBottomFrom(convolution->HandOverOutput());
    seams->push_back(
        {producer, i, [convolution, blob](int) { convolution->FinishHandedOutput(blob); }, {}});
    ++handed;
  }
  LOG_IF(INFO, graph.log && handed > 0)
      << handed << " Scale layers move their convolution's output out of oneDNN's blocked layout";
}

template void HandBlockedOutputsToScales(NetGraph<float>&, std::vector<Net<float>::Seam>*);
template void HandBlockedOutputsToScales(NetGraph<double>&, std::vector<Net<double>::Seam>*);

}  // namespace crema
