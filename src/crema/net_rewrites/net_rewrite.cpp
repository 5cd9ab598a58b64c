#include "crema/net_rewrites/net_rewrite.hpp"

#include <algorithm>

namespace crema {

template <typename Dtype>
int NetGraph<Dtype>::Producer(int i, int blob_id) const {
  for (int maker = i - 1; maker >= 0; --maker) {
    if (std::find(top_ids[maker].begin(), top_ids[maker].end(), blob_id) != top_ids[maker].end()) {
      return maker;
    }
  }
  return -1;
}

// The list. Order matters: folding into convolutions takes whole chains
// first (the others then find no plain layers there), and the blocked
// hand-over looks through a BatchNorm the fold joined to its Scale.
template <typename Dtype>
std::vector<Seam> RewriteNet(NetGraph<Dtype>& graph) {
  std::vector<Seam> seams;
  FoldIntoConvolutions(graph, &seams);
  FoldBatchNormsIntoScales(graph, &seams);
  HandBlockedOutputsToScales(graph, &seams);
  LendEltwiseGradients(graph, &seams);
  return seams;
}

template struct NetGraph<float>;
template struct NetGraph<double>;
template std::vector<Seam> RewriteNet(NetGraph<float>& graph);
template std::vector<Seam> RewriteNet(NetGraph<double>& graph);

}  // namespace crema
