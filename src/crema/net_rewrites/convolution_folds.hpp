// The per-channel layers in place after a convolution that fold into its
// weights and bias, for the rewrites that fold them: the backend-free one
// (fold_into_convolution_weights.cpp) and the backends' lowerings (oneDNN's
// folded chains). A BatchNorm on stored statistics and a per-channel Scale,
// each optional, in that order: output channel c of the chain computes
// (conv_c(x) + b_c - mean_c) / std_c * gamma_c + beta_c, which is a
// convolution with channel c's weights times factor_c = gamma_c / std_c and
// the bias (b_c - mean_c) * factor_c + beta_c, std_c = sqrt(variance_c +
// eps) from the averages (the BatchNorm's sums times its average factor).
#ifndef CREMA_NET_REWRITES_CONVOLUTION_FOLDS_HPP_
#define CREMA_NET_REWRITES_CONVOLUTION_FOLDS_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "crema/net_rewrites/net_rewrite.hpp"

namespace crema {

// The folded layers' blobs: each pointer null where the chain has no such
// layer. The blobs are the layers' own (their values are read at each fold).
struct ChannelFolds {
  // A BatchNorm on stored statistics: its running sums of means and
  // variances, the factor that turns them into averages (blobs 0-2), eps.
  const Blob<float>* mean_sums = nullptr;
  const Blob<float>* variance_sums = nullptr;
  const Blob<float>* average_factor = nullptr;
  float eps = 0;
  // A per-channel Scale's learned scale and bias (null without bias_term).
  const Blob<float>* scale = nullptr;
  const Blob<float>* shift = nullptr;

  bool empty() const { return !mean_sums && !scale; }
  // Writes the folded weights and bias of a convolution of `channels`
  // output channels, `per_channel` weights each (`bias` null without one).
  void Fold(int channels, size_t per_channel, const float* weights, const float* bias,
            float* folded_weights, float* folded_bias) const;
  // Calls visit(blob) for each blob above that the chain has.
  template <typename Visit>
  void ForEachBlob(Visit visit) const {
    for (const Blob<float>* blob : {mean_sums, variance_sums, average_factor, scale, shift}) {
      if (blob) visit(*blob);
    }
  }
};

// Whether layer i works in place on `blob` alone.
bool InPlaceOn(const NetGraph<float>& graph, int i, const Blob<float>* blob);

// The BatchNorm (the reference layer, engine DEFAULT, on stored statistics,
// without a learned scale and bias) and the per-channel Scale in place
// right after convolution i, each optional, into *folds; returns the last
// layer they reach (i where neither is there).
int CollectChannelFolds(const NetGraph<float>& graph, int i, ChannelFolds* folds);

// Whether weights folded from some blobs are still theirs: the stamps
// (SyncedMemory::stamp) of a convolution's blobs and its folds' at the
// last fold.
class FoldSources {
 public:
  // Whether every source's stamp is the one Record kept (compared in
  // place: it runs every pass). False before the first Record.
  bool Current(const std::vector<std::shared_ptr<Blob<float>>>& convolution,
               const ChannelFolds& folds) const;
  void Record(const std::vector<std::shared_ptr<Blob<float>>>& convolution,
              const ChannelFolds& folds);

 private:
  std::vector<uint64_t> stamps_;  // empty: nothing folded yet
};

}  // namespace crema

#endif  // CREMA_NET_REWRITES_CONVOLUTION_FOLDS_HPP_
