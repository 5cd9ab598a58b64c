// Rewrite, for nets made to run forward (NetGraph::runs_forward) in CPU
// mode: a oneDNN convolution (engine DEFAULT or DNNL, float, one bottom, not
// in place) and the layers right after it in place on its top, in this
// order and each optional: a BatchNorm on stored statistics, a per-channel
// Scale, a ReLU or ReLU6, become one FoldedChain computed by a
// DnnlFoldedConvolution (dnnl/dnnl_folded_conv_layer.hpp). A folded
// convolution whose bottom is an earlier one's top reads that one's blocked
// output. Its seam: a forward pass that ends inside the chain runs the plain
// layers up to its end (FoldedChain).
//
// Left plain: engine CAFFE (the reference body asked for), bf16 and
// Winograd convolutions (their own primitives), BatchNorm on batch
// statistics or on another engine, a Scale with its scale from a bottom.
#include <functional>
#include <map>
#include <memory>
#include <type_traits>
#include <typeinfo>

#include "crema/net_rewrites/folded_chain.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"
#ifdef CREMA_DNNL
#include "crema/dnnl/dnnl_conv_layer.hpp"
#include "crema/dnnl/dnnl_folded_conv_layer.hpp"
#include "crema/dnnl/dnnl_relu_layer.hpp"
#include "crema/layers/batch_norm_layer.hpp"
#include "crema/layers/relu6_layer.hpp"
#include "crema/layers/relu_layer.hpp"
#include "crema/layers/scale_layer.hpp"
#endif

namespace crema {

#ifdef CREMA_DNNL
namespace {

// Whether layer i works in place on `blob` alone.
bool InPlaceOn(const NetGraph<float>& graph, int i, const Blob<float>* blob) {
  return graph.bottoms[i].size() == 1 && graph.tops[i].size() == 1 && graph.bottoms[i][0] == blob &&
         graph.tops[i][0] == blob;
}

bool FoldableConvolution(const NetGraph<float>& graph, int i) {
  const Layer<float>& layer = *graph.layers[i];
  const bool dnnl = typeid(layer) == typeid(DnnlConvolutionLayer<float>) ||
                    typeid(layer) == typeid(DnnlDepthwiseConvolutionLayer<float>);
  const LayerParameter& param = layer.layer_param();
  return dnnl && graph.bottoms[i].size() == 1 && graph.tops[i].size() == 1 &&
         graph.bottoms[i][0] != graph.tops[i][0] && graph.bottoms[i][0]->num_axes() == 4 &&
         param.compute_precision() != BF16 && param.convolution_algorithm() != WINOGRAD;
}

// The layers after convolution i that fold into it, into *folds; returns
// the chain's last layer.
int CollectFolds(const NetGraph<float>& graph, int i, ConvolutionFolds* folds) {
  Blob<float>* blob = graph.tops[i][0];
  const int count = static_cast<int>(graph.layers.size());
  int next = i + 1;
  const auto at = [&](int j) -> Layer<float>* {
    return j < count && InPlaceOn(graph, j, blob) ? graph.layers[j].get() : nullptr;
  };
  if (Layer<float>* layer = at(next); layer && typeid(*layer) == typeid(BatchNormLayer<float>)) {
    auto* batch_norm = static_cast<BatchNormLayer<float>*>(layer);
    const BatchNormParameter& param = batch_norm->layer_param().batch_norm_param();
    if (batch_norm->uses_global_stats() && param.engine() == BatchNormParameter::DEFAULT) {
      folds->mean_sums = batch_norm->blobs()[0].get();
      folds->variance_sums = batch_norm->blobs()[1].get();
      folds->average_factor = batch_norm->blobs()[2].get();
      folds->eps = param.eps();
      ++next;
    }
  }
  if (Layer<float>* layer = at(next); layer && typeid(*layer) == typeid(ScaleLayer<float>)) {
    auto* scale = static_cast<ScaleLayer<float>*>(layer);
    if (scale->ScalesChannelsOf(*blob)) {
      folds->scale = scale->blobs()[0].get();
      // A learned scale is blob 0; with bias_term, the bias is blob 1.
      folds->shift = scale->blobs().size() > 1 ? scale->blobs()[1].get() : nullptr;
      ++next;
    }
  }
  if (Layer<float>* layer = at(next)) {
    if (typeid(*layer) == typeid(ReLULayer<float>) ||
        typeid(*layer) == typeid(DnnlReLULayer<float>)) {
      folds->clamp = ConvolutionFolds::Clamp::kReLU;
      folds->negative_slope = layer->layer_param().relu_param().negative_slope();
      ++next;
    } else if (typeid(*layer) == typeid(ReLU6Layer<float>)) {
      folds->clamp = ConvolutionFolds::Clamp::kReLU6;
      ++next;
    }
  }
  return next - 1;
}

// The folded computation for convolution i, set up on its blobs.
// (Its primitive, made at set-up, reads the producer's layout where it can.)
template <template <typename> class Reference>
std::shared_ptr<DnnlFoldedConvolution<Reference>> MakeFolded(
    const NetGraph<float>& graph, int i, const ConvolutionFolds& folds,
    const FoldedConvolutionOutput* producer) {
  auto folded =
      std::make_shared<DnnlFoldedConvolution<Reference>>(graph.layers[i]->layer_param(), folds);
  folded->blobs() = graph.layers[i]->blobs();
  folded->TakeInputFrom(producer);
  folded->SetUp(graph.bottoms[i], graph.tops[i]);
  return folded;
}

void FoldFloatChains(NetGraph<float>& graph, std::vector<Net<float>::Seam>* seams) {
  if (!graph.runs_forward || Context::mode() != Context::CPU) return;
  std::map<const Blob<float>*, const FoldedConvolutionOutput*> outputs;
  int chains = 0, folded_layers = 0;
  for (int i = 0; i < static_cast<int>(graph.layers.size()); ++i) {
    if (!FoldableConvolution(graph, i)) continue;
    ConvolutionFolds folds;
    const int last = CollectFolds(graph, i, &folds);
    std::shared_ptr<Layer<float>> folded;
    std::function<bool()> ready;
    FoldedConvolutionOutput* output = nullptr;
    const FoldedConvolutionOutput* producer = outputs[graph.bottoms[i][0]];
    const Layer<float>& convolution = *graph.layers[i];
    if (typeid(convolution) == typeid(DnnlConvolutionLayer<float>)) {
      auto made = MakeFolded<ConvolutionLayer>(graph, i, folds, producer);
      ready = [made] { return made->ready(); };
      output = made.get();
      folded = made;
    } else {
      auto made = MakeFolded<DepthwiseConvolutionLayer>(graph, i, folds, producer);
      ready = [made] { return made->ready(); };
      output = made.get();
      folded = made;
    }
    Blob<float>* blob = graph.tops[i][0];
    outputs[blob] = output;
    std::vector<std::shared_ptr<Layer<float>>> plain(graph.layers.begin() + i,
                                                     graph.layers.begin() + last + 1);
    auto chain = std::make_shared<FoldedChain>(std::move(plain), folded, std::move(ready),
                                               graph.bottoms[i], blob);
    for (int slot = 0; slot < chain->size(); ++slot) {
      graph.layers[i + slot] = std::make_shared<FoldedLayer>(chain, slot);
    }
    if (last > i) {
      seams->push_back({i, last, [chain, i](int end) { chain->FinishForward(end - i); }, nullptr});
    }
    ++chains;
    folded_layers += last - i;
    i = last;
  }
  LOG_IF(INFO, graph.log && chains > 0)
      << "Folded " << folded_layers << " layers into " << chains
      << " convolutions for the forward pass (oneDNN inference primitives)";
}

}  // namespace
#endif

template <typename Dtype>
void FoldIntoConvolutions(NetGraph<Dtype>& graph, std::vector<typename Net<Dtype>::Seam>* seams) {
#ifdef CREMA_DNNL
  if constexpr (std::is_same<Dtype, float>::value) FoldFloatChains(graph, seams);
#else
  (void)graph;
  (void)seams;
#endif
}

template void FoldIntoConvolutions(NetGraph<float>&, std::vector<Net<float>::Seam>*);
template void FoldIntoConvolutions(NetGraph<double>&, std::vector<Net<double>::Seam>*);

}  // namespace crema
