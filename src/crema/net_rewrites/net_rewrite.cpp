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

namespace {

template <typename Dtype>
std::vector<typename RewriteList<Dtype>::Entry>& Registered() {
  static std::vector<typename RewriteList<Dtype>::Entry> entries;
  return entries;
}

}  // namespace

template <typename Dtype>
void RewriteList<Dtype>::Add(RewriteStage stage, const std::string& name,
                             NetRewrite<Dtype> rewrite) {
  std::vector<Entry>& entries = Registered<Dtype>();
  for (const Entry& entry : entries) CHECK_NE(entry.name, name) << "net rewrite registered twice";
  entries.push_back({stage, name, rewrite});
}

template <typename Dtype>
std::vector<typename RewriteList<Dtype>::Entry> RewriteList<Dtype>::Entries() {
  std::vector<Entry> entries = Registered<Dtype>();
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.stage != b.stage ? a.stage < b.stage : a.name < b.name;
  });
  return entries;
}

template <typename Dtype>
std::vector<Seam> RewriteNet(NetGraph<Dtype>& graph) {
  std::vector<Seam> seams;
  for (const auto& entry : RewriteList<Dtype>::Entries()) entry.rewrite(graph, &seams);
  return seams;
}

template struct NetGraph<float>;
template struct NetGraph<double>;
template class RewriteList<float>;
template class RewriteList<double>;
template std::vector<Seam> RewriteNet(NetGraph<float>& graph);
template std::vector<Seam> RewriteNet(NetGraph<double>& graph);

}  // namespace crema
