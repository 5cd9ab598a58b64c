// Rewrite: each Eltwise SUM lets its first coefficient-1 bottom that a Split
// made (and that takes a gradient) hold the Eltwise's top gradient itself
// (EltwiseLayer::LendGradientTo): the Split reads it there instead of a
// copy. Only a Split's top qualifies: its gradient has exactly one writer,
// the Eltwise, and one reader, the Split. No seam: every pass sees the same
// blobs.
#include <typeinfo>

#include "crema/layers/eltwise_layer.hpp"
#include "crema/layers/split_layer.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"

namespace crema {

template <typename Dtype>
void LendEltwiseGradients(NetGraph<Dtype>& graph, std::vector<Seam>*) {
  int shared = 0;
  for (int i = 0; i < static_cast<int>(graph.layers.size()); ++i) {
    auto* eltwise = dynamic_cast<EltwiseLayer<Dtype>*>(graph.layers[i].get());
    if (!eltwise) continue;
    for (int k = 0; k < static_cast<int>(graph.bottoms[i].size()); ++k) {
      if (!graph.bottom_need_backward[i][k] || !eltwise->CanLendGradientTo(k) ||
          graph.bottoms[i][k] == graph.tops[i][0]) {
        continue;
      }
      const int maker = graph.Producer(i, graph.bottom_ids[i][k]);
      if (maker < 0 || typeid(*graph.layers[maker]) != typeid(SplitLayer<Dtype>)) continue;
      eltwise->LendGradientTo(k);
      eltwise->Reshape(graph.bottoms[i], graph.tops[i]);
      ++shared;
      break;
    }
  }
  LOG_IF(INFO, graph.log && shared > 0)
      << shared << " Eltwise layers give their top gradient to a Split without a copy";
}

REGISTER_NET_REWRITE(kLendBuffers, "Eltwise gradient to Split", LendEltwiseGradients);

}  // namespace crema
