// oneDNN's lowering of the hand-over (RewriteStage::kHandOverLayouts): a
// per-channel Scale in place on a one-bottom oneDNN convolution's top (right
// after it, or after a BatchNorm folded into it) takes the convolution's
// output in oneDNN's blocked layout (FusedScaleLayer::TakeBottomFrom,
// BlockedOutputProducer::HandOverOutput), moved by channel_blocks. Its seam: a forward
// pass that ends between the two has the convolution finish the move into
// the blob.
#include <memory>
#include <type_traits>
#include <typeinfo>

#include "crema/dnnl/channel_blocks.hpp"
#include "crema/dnnl/dnnl_conv_layer.hpp"
#include "crema/net_rewrites/fused_scale_layer.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"

namespace crema {

// oneDNN layers are float: the rewrite has work only in a float net.
namespace {

// A convolution's output handed over in 16-channel blocks.
class BlockedBottom : public HandedOverBottom {
 public:
  explicit BlockedBottom(BlockedOutput* output) : output_(output) {}
  bool MoveInto(int outer, int channels, int inner, const float* mean, const float* factor,
                const float* bias, float* bottom, float* top) override {
    const float* blocks = output_->Take();
    if (!blocks) return false;
    ChannelBlocksToPlainAndAffine(blocks, bottom, top, outer, channels, inner, mean, factor, bias);
    return true;
  }

 private:
  BlockedOutput* const output_;  // the convolution's
};

// The oneDNN convolution (plain or depthwise) `layer` is, or null.
BlockedOutputProducer* AsDnnlConvolution(Layer<float>* layer) {
  if (typeid(*layer) == typeid(DnnlConvolutionLayer<float>)) {
    return static_cast<DnnlConvolutionLayer<float>*>(layer);
  }
  if (typeid(*layer) == typeid(DnnlDepthwiseConvolutionLayer<float>)) {
    return static_cast<DnnlDepthwiseConvolutionLayer<float>*>(layer);
  }
  return nullptr;
}

// The Scale's producer: the layer before it, or the one before a folded
// BatchNorm between them.
int ProducerThroughFold(const NetGraph<float>& graph, int scale_id) {
  const bool after_fold =
      scale_id >= 2 && dynamic_cast<FoldedBatchNormLayer<float>*>(graph.layers[scale_id - 1].get());
  return after_fold ? scale_id - 2 : scale_id - 1;
}

void HandFloatOutputs(NetGraph<float>& graph, std::vector<Seam>* seams) {
  int handed = 0;
  for (int i = 1; i < static_cast<int>(graph.layers.size()); ++i) {
    const auto* plain = dynamic_cast<ScaleLayer<float>*>(graph.layers[i].get());
    if (!plain) continue;
    const int producer = ProducerThroughFold(graph, i);
    BlockedOutputProducer* convolution =
        producer >= 0 ? AsDnnlConvolution(graph.layers[producer].get()) : nullptr;
    if (!convolution || graph.bottoms[producer].size() != 1 || graph.tops[producer].size() != 1) {
      continue;
    }
    Blob<float>* blob = graph.tops[producer][0];
    if (graph.bottoms[i].size() != 1 || graph.bottoms[i][0] != blob || graph.tops[i][0] != blob ||
        !plain->ScalesChannelsOf(*blob)) {
      continue;
    }
    auto* scale = dynamic_cast<FusedScaleLayer<float>*>(graph.layers[i].get());
    if (!scale) scale = graph.template Replace<FusedScaleLayer<float>>(i);
    scale->TakeBottomFrom(std::make_shared<BlockedBottom>(convolution->HandOverOutput()));
    seams->push_back(
        {producer, i, [convolution, blob](int) { convolution->FinishHandedOutput(blob); }, {}, {}});
    ++handed;
  }
  LOG_IF(INFO, graph.log && handed > 0)
      << handed << " Scale layers move their convolution's output out of oneDNN's blocked layout";
}

template <typename Dtype>
void HandBlockedOutputsToScales([[maybe_unused]] NetGraph<Dtype>& graph,
                                [[maybe_unused]] std::vector<Seam>* seams) {
  if constexpr (std::is_same_v<Dtype, float>) HandFloatOutputs(graph, seams);
}

}  // namespace

REGISTER_NET_REWRITE(kHandOverLayouts, "oneDNN blocked outputs to Scale",
                     HandBlockedOutputsToScales);

}  // namespace crema
