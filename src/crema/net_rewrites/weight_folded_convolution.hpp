// A convolution computed with the BatchNorm and Scale in place after it
// folded into its weights and bias (convolution_folds.hpp): the folded
// computation of the chains the backend-free rewrite
// fold_into_convolution_weights.cpp makes, in every build. A convolution of
// the original's parameter, with a bias; its own blobs hold the folded
// weights and bias, the original's blobs stay where they were (the net's,
// which solvers and weight files read and write).
//
// Rule it keeps: a pass computes with the weights as they are. The folded
// blobs are folded again at a pass whenever a blob they come from has
// changed since the last fold (SyncedMemory::stamp), so weights copied in
// after the net was built are folded by the first pass that reads them.
#ifndef CREMA_NET_REWRITES_WEIGHT_FOLDED_CONVOLUTION_HPP_
#define CREMA_NET_REWRITES_WEIGHT_FOLDED_CONVOLUTION_HPP_

#include <memory>
#include <vector>

#include "crema/layers/conv_layer.hpp"
#include "crema/layers/depthwise_conv_layer.hpp"
#include "crema/net_rewrites/convolution_folds.hpp"

namespace crema {

template <template <typename> class Convolution>
class WeightFoldedConvolution : public Convolution<float> {
 public:
  // param: the original convolution's; weights: its blobs (weights, and
  // the bias where it has one).
  WeightFoldedConvolution(const LayerParameter& param,
                          std::vector<std::shared_ptr<Blob<float>>> weights,
                          const ChannelFolds& folds);
  // The folded pass alone (no reshape): folds first where a source changed.
  void RunFolded(const std::vector<Blob<float>*>& bottom, const std::vector<Blob<float>*>& top);

 private:
  // The original's parameter, with a bias, without the weights a prototxt
  // may carry, and filled with constants (the fold overwrites them).
  static LayerParameter FoldedParameter(const LayerParameter& param);

  const std::vector<std::shared_ptr<Blob<float>>> weights_;
  const ChannelFolds folds_;
  FoldSources sources_;
};

}  // namespace crema

#endif  // CREMA_NET_REWRITES_WEIGHT_FOLDED_CONVOLUTION_HPP_
