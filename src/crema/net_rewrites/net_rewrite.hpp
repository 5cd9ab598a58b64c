// Graph rewrites: after a net is built, each rewrite in the list looks at
// its layers and wiring and may replace layers by twins that share work
// across a pair (a fused twin derives from the layer it replaces and keeps
// its blobs, parameter and type). Net knows none of them: it runs the list
// once and keeps the seams they return.
//
// The list is one, and open: the passes that need no backend live in this
// folder, and a backend registers its lowerings into the same list
// (REGISTER_NET_REWRITE at the bottom of the lowering's .cpp, as its layers
// register into their type's body list). Where each runs is its stage.
//
// A seam marks layers first..last that a rewrite joined. Every pass that the
// net runs calls it: a forward pass that ends at a layer in [first, last)
// calls finish_forward (the joined work left pending is done, so the blobs
// hold what the plain layers would have written), and every backward pass
// calls prepare_backward with the layer it runs down to.
#ifndef CREMA_NET_REWRITES_NET_REWRITE_HPP_
#define CREMA_NET_REWRITES_NET_REWRITE_HPP_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crema/layer.hpp"

namespace crema {

// Layers first..last that a rewrite joined: a forward pass that ends at a
// layer in [first, last) calls finish_forward with that layer, every
// backward pass calls prepare_backward with the layer it runs down to, and
// every forward pass of layers start..end calls begin_forward(start, end)
// before its first layer (any may be empty), so that any pass leaves the
// blobs as the plain layers would.
struct Seam {
  int first = 0, last = 0;
  std::function<void(int end)> finish_forward;
  std::function<void(int end)> prepare_backward;
  std::function<void(int start, int end)> begin_forward;
};

// A net's seams, in the order of their first layer (Net calls them so).
struct NetSeams {
  std::vector<Seam> list;
};

// The built net as rewrites see it.
template <typename Dtype>
struct NetGraph {
  std::vector<std::shared_ptr<Layer<Dtype>>>& layers;
  const std::vector<std::vector<Blob<Dtype>*>>& bottoms;
  const std::vector<std::vector<Blob<Dtype>*>>& tops;
  const std::vector<std::vector<int>>& bottom_ids;
  const std::vector<std::vector<int>>& top_ids;
  const std::vector<std::vector<bool>>& bottom_need_backward;
  bool log;
  // A TEST-phase net without force_backward: made to run forward (a deploy
  // net, a solver's test net). Its backward passes, if asked for, may cost
  // more than a training net's.
  bool runs_forward;

  // Replaces layer i by `twin`, made from the same parameter: the twin takes
  // over its blobs and which of them learn, and is set up on its bottoms and
  // tops. Returns the twin.
  template <typename Twin>
  Twin* Replace(int i) {
    auto twin = std::make_shared<Twin>(layers[i]->layer_param());
    const Layer<Dtype>& original = *layers[i];
    twin->blobs() = layers[i]->blobs();
    twin->SetUp(bottoms[i], tops[i]);
    for (size_t p = 0; p < twin->blobs().size(); ++p) {
      twin->set_param_propagate_down(static_cast<int>(p),
                                     original.param_propagate_down(static_cast<int>(p)));
    }
    layers[i] = twin;
    return twin.get();
  }
  // The layer that writes blob `blob_id` for layer i's bottoms: the last one
  // before i with it as a top, or -1.
  int Producer(int i, int blob_id) const;
};

// Where a rewrite runs: the list runs the stages in this order, and the
// rewrites of one stage in the order of their names.
enum class RewriteStage {
  // A backend computes chains of layers as one (oneDNN's folded chains).
  kLowerChains,
  // The per-channel layers after a convolution fold into its weights and
  // bias (what the lowerings left plain).
  kFoldWeights,
  // A BatchNorm's normalisation folds into the Scale after it.
  kFoldIntoScales,
  // A backend hands a layer's output to the next in its own layout
  // (oneDNN's blocked outputs; it looks through a BatchNorm folded into a
  // Scale).
  kHandOverLayouts,
  // Layers lend each other buffers (the Eltwise's top gradient).
  kLendBuffers,
};

template <typename Dtype>
using NetRewrite = void (*)(NetGraph<Dtype>& graph, std::vector<Seam>* seams);

template <typename Dtype>
class RewriteList {
 public:
  struct Entry {
    RewriteStage stage;
    std::string name;
    NetRewrite<Dtype> rewrite;
  };
  // Registers a rewrite (at static initialisation; a name registered twice
  // is a programming error).
  static void Add(RewriteStage stage, const std::string& name, NetRewrite<Dtype> rewrite);
  // The rewrites in the order they run.
  static std::vector<Entry> Entries();
};

// Registers the function template `function` (instantiated for float and
// double; a rewrite with work for one precision only returns at once for
// the other) at `stage` under `name`.
#define REGISTER_NET_REWRITE(stage, name, function)                                           \
  static const bool crema_net_rewrite_##function = [] {                                       \
    ::crema::RewriteList<float>::Add(::crema::RewriteStage::stage, name, &function<float>);   \
    ::crema::RewriteList<double>::Add(::crema::RewriteStage::stage, name, &function<double>); \
    return true;                                                                              \
  }()

// Runs every rewrite of the list, in order, and returns their seams.
template <typename Dtype>
std::vector<Seam> RewriteNet(NetGraph<Dtype>& graph);

}  // namespace crema

#endif  // CREMA_NET_REWRITES_NET_REWRITE_HPP_
