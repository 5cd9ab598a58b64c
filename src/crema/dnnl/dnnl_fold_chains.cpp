// oneDNN's lowering of the folded chains (RewriteStage::kLowerChains), for
// nets made to run forward (NetGraph::runs_forward) in CPU mode: a oneDNN
// convolution (engine DEFAULT or DNNL, float, one bottom, not
// in place) and the layers right after it in place on its top, in this
// order and each optional: a BatchNorm on stored statistics, a per-channel
// Scale, a ReLU or ReLU6, become one FoldedChain computed by a
// DnnlFoldedConvolution (dnnl/dnnl_folded_conv_layer.hpp). Then, reading
// what such a layer wrote: a oneDNN Pooling becomes a DnnlFoldedPooling, a
// two-bottom Eltwise (with a ReLU or ReLU6 in place after it) a
// DnnlFoldedEltwise, a Permute a DnnlFoldedPermute and a Normalize a
// DnnlFoldedNormalize; a Split hands its
// producer on to its tops. A folded layer whose bottom is an earlier one's
// top reads that one's blocked output (folded_output.hpp). A convolution
// whose only reader is a folded depthwise convolution or Eltwise may run
// inside it (FusePointwise, FuseConvolution). A convolution whose only
// reader is another convolution that does not run it inside itself writes
// into a slot of the net's arena (dnnl/folded_arena.hpp; PlanArena). The
// seams: a forward pass that ends inside a chain runs the plain layers up to
// its end (FoldedChain); a convolution's pass left pending runs before a
// pass that does not run it; a pass that stops before the arena's last
// reader first writes the outputs after it into their blobs.
//
// Left plain: engine CAFFE (the reference body asked for), bf16
// convolutions (their own primitives), BatchNorm on batch statistics or on
// another engine, a Scale with its scale from a bottom.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "crema/dnnl/dnnl_conv_layer.hpp"
#include "crema/dnnl/dnnl_eltwise_layer.hpp"
#include "crema/dnnl/dnnl_folded_conv_layer.hpp"
#include "crema/dnnl/dnnl_folded_eltwise_layer.hpp"
#include "crema/dnnl/dnnl_folded_normalize_layer.hpp"
#include "crema/dnnl/dnnl_folded_permute_layer.hpp"
#include "crema/dnnl/dnnl_folded_pooling_layer.hpp"
#include "crema/dnnl/dnnl_pooling_layer.hpp"
#include "crema/dnnl/dnnl_relu_layer.hpp"
#include "crema/layers/batch_norm_layer.hpp"
#include "crema/layers/eltwise_layer.hpp"
#include "crema/layers/normalize_layer.hpp"
#include "crema/layers/permute_layer.hpp"
#include "crema/layers/relu6_layer.hpp"
#include "crema/layers/relu_layer.hpp"
#include "crema/layers/scale_layer.hpp"
#include "crema/layers/split_layer.hpp"
#include "crema/net_rewrites/convolution_folds.hpp"
#include "crema/net_rewrites/folded_chain.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"

namespace crema {

namespace {

bool FoldableConvolution(const NetGraph<float>& graph, int i) {
  const Layer<float>& layer = *graph.layers[i];
  const bool dnnl = typeid(layer) == typeid(DnnlConvolutionLayer<float>) ||
                    typeid(layer) == typeid(DnnlDepthwiseConvolutionLayer<float>);
  const LayerParameter& param = layer.layer_param();
  return dnnl && graph.bottoms[i].size() == 1 && graph.tops[i].size() == 1 &&
         graph.bottoms[i][0] != graph.tops[i][0] && graph.bottoms[i][0]->num_axes() == 4 &&
         param.compute_precision() != BF16;
}

// A ReLU or ReLU6 at layer `next` in place on `blob`, into *activation;
// returns the chain's last layer (next - 1 where there is none).
int CollectActivation(const NetGraph<float>& graph, int next, const Blob<float>* blob,
                      FoldedActivation* activation) {
  if (next >= static_cast<int>(graph.layers.size()) || !InPlaceOn(graph, next, blob)) {
    return next - 1;
  }
  const Layer<float>& layer = *graph.layers[next];
  if (typeid(layer) == typeid(ReLULayer<float>) || typeid(layer) == typeid(DnnlReLULayer<float>)) {
    activation->kind = FoldedActivation::Kind::kReLU;
    activation->negative_slope = layer.layer_param().relu_param().negative_slope();
    return next;
  }
  if (typeid(layer) == typeid(ReLU6Layer<float>)) {
    activation->kind = FoldedActivation::Kind::kReLU6;
    return next;
  }
  return next - 1;
}

// The layers after convolution i that fold into it, into *folds; returns
// the chain's last layer.
int CollectFolds(const NetGraph<float>& graph, int i, ConvolutionFolds* folds) {
  const int last = CollectChannelFolds(graph, i, folds);
  return CollectActivation(graph, last + 1, graph.tops[i][0], &folds->activation);
}

// What folding at layer i makes: the folded layer (null: nothing folds
// there), whether it can run for the current shape, its output for the
// layers that read it, and the chain's last layer.
struct Fold {
  std::shared_ptr<Layer<float>> layer;
  std::function<bool()> ready;
  FoldedChain::Run run;
  FoldedOutput* output = nullptr;
  int last = -1;
};

// Sets `folded` up on layer i's blobs and bottoms (its primitive, made at
// set-up, reads its producers' layouts where it can).
template <typename Folded>
Fold SetUpFold(std::shared_ptr<Folded> folded, const NetGraph<float>& graph, int i, int last) {
  folded->blobs() = graph.layers[i]->blobs();
  folded->SetUp(graph.bottoms[i], graph.tops[i]);
  Fold fold;
  Folded* raw = folded.get();  // the chain owns it (fold.layer)
  fold.ready = [raw] { return raw->ready(); };
  FoldedOutput* output = raw;
  fold.run = [output](const std::vector<Blob<float>*>& bottom,
                      const std::vector<Blob<float>*>& top) { output->RunFolded(bottom, top); };
  fold.output = raw;
  fold.layer = std::move(folded);
  fold.last = last;
  return fold;
}

using Producers = std::map<const Blob<float>*, const FoldedOutput*>;

// A folded convolution of class Convolution, and its chain's first layer:
// a reader may fuse it (FusePointwise).
struct FoldedConvolution {
  DnnlFoldedConvolution<ConvolutionLayer>* layer = nullptr;
  int first = -1;
};
using Convolutions = std::map<const Blob<float>*, FoldedConvolution>;

// The layers that read `blob` other than in place, once for each read, in
// net order.
std::vector<int> Readers(const NetGraph<float>& graph, const Blob<float>* blob) {
  std::vector<int> readers;
  for (int j = 0; j < static_cast<int>(graph.layers.size()); ++j) {
    const auto& bottoms = graph.bottoms[j];
    const auto& tops = graph.tops[j];
    if (std::find(tops.begin(), tops.end(), blob) != tops.end()) continue;
    readers.insert(readers.end(), std::count(bottoms.begin(), bottoms.end(), blob), j);
  }
  return readers;
}

int ReadersOf(const NetGraph<float>& graph, const Blob<float>* blob) {
  return static_cast<int>(Readers(graph, blob).size());
}

// The only layer that reads `blob` other than in place (once); -1 where
// none or several do.
int OnlyReader(const NetGraph<float>& graph, const Blob<float>* blob) {
  const std::vector<int> readers = Readers(graph, blob);
  return readers.size() == 1 ? readers[0] : -1;
}

// The folded convolution that wrote `blob`, where a layer reading it may
// fuse it: the only reader of the blob; else none.
FoldedConvolution FusableProducer(const NetGraph<float>& graph, const Convolutions& convolutions,
                                  const Blob<float>* blob) {
  const auto found = convolutions.find(blob);
  if (found == convolutions.end() || ReadersOf(graph, blob) != 1) return {};
  return found->second;
}

// A convolution fused into its reader may leave its pass pending: it runs
// before any forward pass that does not run the convolution's chain, which
// may write the convolution's input or read its output.
void RunPendingBeforeOtherPasses(const FoldedConvolution& fused, std::vector<Seam>* seams) {
  seams->push_back({fused.first, fused.first, nullptr, nullptr,
                    [layer = fused.layer, first = fused.first](int start, int end) {
                      if (start > first || end < first) layer->RunPending();
                    }});
}

// Convolution i, and its pointwise producer fused into it where layer i
// is that producer's only reader (whether the shapes fuse is the folded
// layer's to decide, shape by shape).
Fold FoldConvolution(const NetGraph<float>& graph, int i, Producers& producers,
                     Convolutions& convolutions, std::vector<Seam>* seams) {
  if (!FoldableConvolution(graph, i)) return {};
  ConvolutionFolds folds;
  const int last = CollectFolds(graph, i, &folds);
  const LayerParameter& param = graph.layers[i]->layer_param();
  Blob<float>* bottom = graph.bottoms[i][0];
  const FoldedOutput* producer = producers[bottom];
  const FoldedConvolution pointwise = FusableProducer(graph, convolutions, bottom);
  const auto set_up = [&](auto folded) {
    folded->TakeInputFrom(producer);
    if (pointwise.layer) {
      folded->FusePointwise(pointwise.layer);
      RunPendingBeforeOtherPasses(pointwise, seams);
    }
    return SetUpFold(std::move(folded), graph, i, last);
  };
  if (typeid(*graph.layers[i]) == typeid(DnnlConvolutionLayer<float>)) {
    auto folded = std::make_shared<DnnlFoldedConvolution<ConvolutionLayer>>(param, folds);
    convolutions[graph.tops[i][0]] = {folded.get(), i};
    return set_up(std::move(folded));
  }
  return set_up(std::make_shared<DnnlFoldedConvolution<DepthwiseConvolutionLayer>>(param, folds));
}

// A oneDNN Pooling (engine DEFAULT or DNNL) of one bottom a folded layer
// wrote, not in place.
Fold FoldPooling(const NetGraph<float>& graph, int i, Producers& producers) {
  const Layer<float>& layer = *graph.layers[i];
  if (typeid(layer) != typeid(DnnlPoolingLayer<float>) || graph.bottoms[i].size() != 1 ||
      graph.tops[i].size() != 1 || graph.bottoms[i][0] == graph.tops[i][0]) {
    return {};
  }
  const FoldedOutput* producer = producers[graph.bottoms[i][0]];
  if (!producer) return {};
  return SetUpFold(std::make_shared<DnnlFoldedPooling>(layer.layer_param(), producer), graph, i, i);
}

// A layer of class Plain with one bottom a folded layer wrote in blocks,
// not in place, as a Folded (which takes the settings it has a kernel for;
// ready() is false for the others).
template <template <typename> class Plain, typename Folded>
Fold FoldReaderOfBlocks(const NetGraph<float>& graph, int i, Producers& producers) {
  const Layer<float>& layer = *graph.layers[i];
  if (typeid(layer) != typeid(Plain<float>) || graph.bottoms[i].size() != 1 ||
      graph.tops[i].size() != 1 || graph.bottoms[i][0] == graph.tops[i][0]) {
    return {};
  }
  const FoldedOutput* producer = producers[graph.bottoms[i][0]];
  if (!producer || !producer->BlockedOutputDesc()) return {};
  return SetUpFold(std::make_shared<Folded>(layer.layer_param(), producer), graph, i, i);
}

// An Eltwise (not engine CAFFE) of two bottoms, at least one a folded
// layer wrote, not in place, and the ReLU or ReLU6 in place after it; with
// the convolution that wrote one bottom fused into it, where the eltwise is
// its only reader (the first bottom's where both are).
Fold FoldEltwise(const NetGraph<float>& graph, int i, Producers& producers,
                 const Convolutions& convolutions, std::vector<Seam>* seams) {
  const Layer<float>& layer = *graph.layers[i];
  const LayerParameter& param = layer.layer_param();
  const std::vector<Blob<float>*>& bottoms = graph.bottoms[i];
  if ((typeid(layer) != typeid(EltwiseLayer<float>) &&
       typeid(layer) != typeid(DnnlEltwiseLayer<float>)) ||
      param.eltwise_param().engine() == EltwiseParameter::CAFFE ||
      !DnnlFoldedEltwise::Folds(param, static_cast<int>(bottoms.size())) ||
      graph.tops[i].size() != 1 || bottoms[0] == graph.tops[i][0] ||
      bottoms[1] == graph.tops[i][0]) {
    return {};
  }
  std::vector<const FoldedOutput*> inputs{producers[bottoms[0]], producers[bottoms[1]]};
  if (!inputs[0] && !inputs[1]) return {};
  FoldedActivation activation;
  const int last = CollectActivation(graph, i + 1, graph.tops[i][0], &activation);
  auto folded = std::make_shared<DnnlFoldedEltwise>(param, std::move(inputs), activation);
  for (int b = 0; b < 2; ++b) {
    const FoldedConvolution convolution = FusableProducer(graph, convolutions, bottoms[b]);
    if (convolution.layer) {
      folded->FuseConvolution(convolution.layer, b);
      RunPendingBeforeOtherPasses(convolution, seams);
      break;
    }
  }
  return SetUpFold(std::move(folded), graph, i, last);
}

// Which outputs write into the arena, in which slot, and the layers from the
// first one's pass to the last pass that reads one.
struct ArenaPlan {
  std::map<const Blob<float>*, int> slots;
  int slot_count = 0, first = 0, last = -1;
};

// The outputs of folded convolutions whose only reader is a folded
// convolution that is not depthwise (a depthwise one may run its producer's
// pass inside its own and leave that output pending). Each lives from its
// pass to its reader's, or to the pass of the reader's only reader (which
// may run the reader's pass left pending, reading this output then);
// outputs whose lives do not overlap share a slot, first fit in net order.
ArenaPlan PlanArena(const NetGraph<float>& graph) {
  ArenaPlan plan;
  std::vector<int> slot_ends;  // the last layer that reads each slot's output
  for (int i = 0; i < static_cast<int>(graph.layers.size()); ++i) {
    if (!FoldableConvolution(graph, i)) continue;
    const Blob<float>* blob = graph.tops[i][0];
    const int reader = OnlyReader(graph, blob);
    if (reader < 0 || !FoldableConvolution(graph, reader) ||
        typeid(*graph.layers[reader]) == typeid(DnnlDepthwiseConvolutionLayer<float>) ||
        graph.layers[reader]->layer_param().convolution_param().group() > 1) {
      continue;
    }
    const int next = OnlyReader(graph, graph.tops[reader][0]);
    const int end = std::max(reader, next);
    size_t slot = 0;
    while (slot < slot_ends.size() && slot_ends[slot] >= i) ++slot;
    if (slot == slot_ends.size()) slot_ends.push_back(end);
    slot_ends[slot] = end;
    plan.slots[blob] = static_cast<int>(slot);
    if (plan.last < 0) plan.first = i;
    plan.last = std::max(plan.last, end);
  }
  plan.slot_count = static_cast<int>(slot_ends.size());
  return plan;
}

void FoldFloatChains(NetGraph<float>& graph, std::vector<Seam>* seams) {
  if (!graph.runs_forward || Context::mode() != Context::CPU) return;
  const ArenaPlan plan = PlanArena(graph);
  const std::shared_ptr<FoldedArena> arena =
      plan.slot_count > 0 ? std::make_shared<FoldedArena>(plan.slot_count) : nullptr;
  Producers producers;
  Convolutions convolutions;
  int chains = 0, folded_layers = 0;
  for (int i = 0; i < static_cast<int>(graph.layers.size()); ++i) {
    if (typeid(*graph.layers[i]) == typeid(SplitLayer<float>)) {
      // A Split's tops share its bottom's memory: its readers read the
      // producer's blocks as well.
      const FoldedOutput* producer = producers[graph.bottoms[i][0]];
      for (Blob<float>* top : graph.tops[i]) producers[top] = producer;
      continue;
    }
    Fold fold = FoldConvolution(graph, i, producers, convolutions, seams);
    if (!fold.layer) fold = FoldPooling(graph, i, producers);
    if (!fold.layer)
      fold = FoldReaderOfBlocks<PermuteLayer, DnnlFoldedPermute>(graph, i, producers);
    if (!fold.layer) {
      fold = FoldReaderOfBlocks<NormalizeLayer, DnnlFoldedNormalize>(graph, i, producers);
    }
    if (!fold.layer) fold = FoldEltwise(graph, i, producers, convolutions, seams);
    if (!fold.layer) continue;
    Blob<float>* blob = graph.tops[i][0];
    producers[blob] = fold.output;
    if (arena) {
      const auto slot = plan.slots.find(blob);
      fold.output->JoinArena(arena, i, slot == plan.slots.end() ? -1 : slot->second);
    }
    const int last = fold.last;
    std::vector<std::shared_ptr<Layer<float>>> plain(graph.layers.begin() + i,
                                                     graph.layers.begin() + last + 1);
    auto chain = std::make_shared<FoldedChain>(std::move(plain), std::move(fold.layer),
                                               std::move(fold.ready), std::move(fold.run),
                                               graph.bottoms[i], blob);
    for (int slot = 0; slot < chain->size(); ++slot) {
      graph.layers[i + slot] = std::make_shared<FoldedLayer>(chain, slot);
    }
    if (last > i) {
      seams->push_back(
          {i, last, [chain, i](int end) { chain->FinishForward(end - i); }, nullptr, nullptr});
    }
    ++chains;
    folded_layers += last - i + 1;
    i = last;
  }
  if (arena) {
    seams->push_back(
        {plan.first, plan.last, nullptr, nullptr, [arena, last = plan.last](int, int end) {
           if (end < last) arena->WriteOutFrom(end);
         }});
  }
  LOG_IF(INFO, graph.log && chains > 0) << "Folded " << folded_layers << " layers into " << chains
                                        << " oneDNN inference primitives for the forward pass";
}

template <typename Dtype>
void LowerFoldedChains([[maybe_unused]] NetGraph<Dtype>& graph,
                       [[maybe_unused]] std::vector<Seam>* seams) {
  if constexpr (std::is_same<Dtype, float>::value) FoldFloatChains(graph, seams);
}

}  // namespace

REGISTER_NET_REWRITE(kLowerChains, "oneDNN folded chains", LowerFoldedChains);

}  // namespace crema
