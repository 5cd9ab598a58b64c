#include "crema/net_rewrites/convolution_folds.hpp"

#include <cmath>
#include <typeinfo>

#include "crema/layers/batch_norm_layer.hpp"
#include "crema/layers/scale_layer.hpp"

namespace crema {

void ChannelFolds::Fold(int channels, size_t per_channel, const float* weights, const float* bias,
                        float* folded_weights, float* folded_bias) const {
  std::vector<float> factor(channels, 1.0f), offset(channels, 0.0f);
  if (bias) {
    for (int c = 0; c < channels; ++c) offset[c] = bias[c];
  }
  if (mean_sums) {
    const float stored = average_factor->cpu_data()[0];
    const float average = stored == 0 ? 0.0f : 1.0f / stored;
    const float* mean = mean_sums->cpu_data();
    const float* variance = variance_sums->cpu_data();
    for (int c = 0; c < channels; ++c) {
      const float std = std::sqrt(variance[c] * average + eps);
      factor[c] = 1.0f / std;
      offset[c] = (offset[c] - mean[c] * average) / std;
    }
  }
  if (scale) {
    const float* gamma = scale->cpu_data();
    const float* beta = shift ? shift->cpu_data() : nullptr;
    for (int c = 0; c < channels; ++c) {
      factor[c] *= gamma[c];
      offset[c] = offset[c] * gamma[c] + (beta ? beta[c] : 0.0f);
    }
  }
  for (int c = 0; c < channels; ++c) {
    for (size_t k = 0; k < per_channel; ++k) {
      folded_weights[c * per_channel + k] = weights[c * per_channel + k] * factor[c];
    }
    folded_bias[c] = offset[c];
  }
}

bool InPlaceOn(const NetGraph<float>& graph, int i, const Blob<float>* blob) {
  return graph.bottoms[i].size() == 1 && graph.tops[i].size() == 1 && graph.bottoms[i][0] == blob &&
         graph.tops[i][0] == blob;
}

int CollectChannelFolds(const NetGraph<float>& graph, int i, ChannelFolds* folds) {
  Blob<float>* blob = graph.tops[i][0];
  const int count = static_cast<int>(graph.layers.size());
  int next = i + 1;
  const auto at = [&](int j) -> Layer<float>* {
    return j < count && InPlaceOn(graph, j, blob) ? graph.layers[j].get() : nullptr;
  };
  if (Layer<float>* layer = at(next); layer && typeid(*layer) == typeid(BatchNormLayer<float>)) {
    auto* batch_norm = static_cast<BatchNormLayer<float>*>(layer);
    const BatchNormParameter& param = batch_norm->layer_param().batch_norm_param();
    if (batch_norm->uses_global_stats() && param.engine() == BatchNormParameter::DEFAULT &&
        !batch_norm->learns_scale_bias()) {
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
  return next - 1;
}

namespace {

template <typename Visit>
void ForEachSource(const std::vector<std::shared_ptr<Blob<float>>>& convolution,
                   const ChannelFolds& folds, Visit visit) {
  for (const auto& blob : convolution) visit(*blob);
  folds.ForEachBlob(visit);
}

}  // namespace

bool FoldSources::Current(const std::vector<std::shared_ptr<Blob<float>>>& convolution,
                          const ChannelFolds& folds) const {
  size_t i = 0;
  bool same = true;
  ForEachSource(convolution, folds, [&](const Blob<float>& blob) {
    same = same && i < stamps_.size() && stamps_[i] == blob.data()->stamp();
    ++i;
  });
  return same && i == stamps_.size();
}

void FoldSources::Record(const std::vector<std::shared_ptr<Blob<float>>>& convolution,
                         const ChannelFolds& folds) {
  stamps_.clear();
  ForEachSource(convolution, folds,
                [&](const Blob<float>& blob) { stamps_.push_back(blob.data()->stamp()); });
}

}  // namespace crema
