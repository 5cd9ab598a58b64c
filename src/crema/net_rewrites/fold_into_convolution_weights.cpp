// Rewrite, in every build, for nets made to run forward
// (NetGraph::runs_forward) in CPU mode: a reference convolution (plain or
// depthwise, float, one bottom, not in place, not bf16, engine DEFAULT) and
// the BatchNorm on stored statistics and the per-channel Scale in place
// right after it (convolution_folds.hpp; at least one of them) become one
// FoldedChain whose folded computation is a WeightFoldedConvolution: one
// pass over the output instead of three. A backend's lowering runs first
// (RewriteStage::kLowerChains) and takes its own convolutions with more
// (a oneDNN build's: the activation as a post-op, blocked layouts); this
// rewrite folds what is left, and all of a build without one.
//
// Left plain: engine CAFFE (Caffe's computation asked for, layer by layer),
// double nets, a BatchNorm on batch statistics, a Scale with its scale from
// a bottom.
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "crema/layer_bodies.hpp"
#include "crema/net_rewrites/convolution_folds.hpp"
#include "crema/net_rewrites/folded_chain.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"
#include "crema/net_rewrites/weight_folded_convolution.hpp"

namespace crema {

namespace {

// Whether layer i is a reference convolution the rewrite may fold into.
bool FoldsIntoWeights(const NetGraph<float>& graph, int i) {
  const Layer<float>& layer = *graph.layers[i];
  const bool reference = typeid(layer) == typeid(ConvolutionLayer<float>) ||
                         typeid(layer) == typeid(DepthwiseConvolutionLayer<float>);
  const LayerParameter& param = layer.layer_param();
  return reference && EngineOf(param) == Engine::kDefault && graph.bottoms[i].size() == 1 &&
         graph.tops[i].size() == 1 && graph.bottoms[i][0] != graph.tops[i][0] &&
         param.compute_precision() != BF16;
}

// The chain's folded convolution, set up on layer i's bottom and top.
template <template <typename> class Convolution>
std::shared_ptr<FoldedChain> MakeChain(const NetGraph<float>& graph, int i, int last,
                                       const ChannelFolds& folds) {
  auto folded = std::make_shared<WeightFoldedConvolution<Convolution>>(
      graph.layers[i]->layer_param(), graph.layers[i]->blobs(), folds);
  folded->SetUp(graph.bottoms[i], graph.tops[i]);
  WeightFoldedConvolution<Convolution>* raw = folded.get();  // the chain owns it
  std::vector<std::shared_ptr<Layer<float>>> plain(graph.layers.begin() + i,
                                                   graph.layers.begin() + last + 1);
  return std::make_shared<FoldedChain>(
      std::move(plain), std::move(folded), [] { return true; },
      [raw](const std::vector<Blob<float>*>& bottom, const std::vector<Blob<float>*>& top) {
        raw->RunFolded(bottom, top);
      },
      graph.bottoms[i], graph.tops[i][0]);
}

void FoldFloatWeights(NetGraph<float>& graph, std::vector<Seam>* seams) {
  if (!graph.runs_forward || Context::mode() != Context::CPU) return;
  int chains = 0, folded_layers = 0;
  for (int i = 0; i < static_cast<int>(graph.layers.size()); ++i) {
    if (!FoldsIntoWeights(graph, i)) continue;
    ChannelFolds folds;
    const int last = CollectChannelFolds(graph, i, &folds);
    if (folds.empty()) continue;
    std::shared_ptr<FoldedChain> chain =
        typeid(*graph.layers[i]) == typeid(ConvolutionLayer<float>)
            ? MakeChain<ConvolutionLayer>(graph, i, last, folds)
            : MakeChain<DepthwiseConvolutionLayer>(graph, i, last, folds);
    for (int slot = 0; slot < chain->size(); ++slot) {
      graph.layers[i + slot] = std::make_shared<FoldedLayer>(chain, slot);
    }
    seams->push_back(
        {i, last, [chain, i](int end) { chain->FinishForward(end - i); }, nullptr, nullptr});
    ++chains;
    folded_layers += last - i + 1;
    i = last;
  }
  LOG_IF(INFO, graph.log && chains > 0)
      << "Folded " << folded_layers << " layers into the weights of " << chains
      << " convolutions for the forward pass";
}

template <typename Dtype>
void FoldIntoConvolutionWeights([[maybe_unused]] NetGraph<Dtype>& graph,
                                [[maybe_unused]] std::vector<Seam>* seams) {
  if constexpr (std::is_same_v<Dtype, float>) FoldFloatWeights(graph, seams);
}

}  // namespace

REGISTER_NET_REWRITE(kFoldWeights, "BatchNorm and Scale into convolution weights",
                     FoldIntoConvolutionWeights);

}  // namespace crema
