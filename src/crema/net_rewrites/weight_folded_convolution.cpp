#include "crema/net_rewrites/weight_folded_convolution.hpp"

#include <utility>

namespace crema {

template <template <typename> class Convolution>
LayerParameter WeightFoldedConvolution<Convolution>::FoldedParameter(const LayerParameter& param) {
  LayerParameter folded = param;
  folded.clear_blobs();
  ConvolutionParameter* convolution = folded.mutable_convolution_param();
  convolution->set_bias_term(true);
  convolution->mutable_weight_filler()->set_type("constant");
  convolution->mutable_bias_filler()->set_type("constant");
  return folded;
}

template <template <typename> class Convolution>
WeightFoldedConvolution<Convolution>::WeightFoldedConvolution(
    const LayerParameter& param, std::vector<std::shared_ptr<Blob<float>>> weights,
    const ChannelFolds& folds)
    : Convolution<float>(FoldedParameter(param)), weights_(std::move(weights)), folds_(folds) {}

template <template <typename> class Convolution>
void WeightFoldedConvolution<Convolution>::RunFolded(const std::vector<Blob<float>*>& bottom,
                                                     const std::vector<Blob<float>*>& top) {
  if (!sources_.Current(weights_, folds_)) {
    Blob<float>& folded_weights = *this->blobs_[0];
    const int channels = folded_weights.shape(0);
    const float* bias = weights_.size() > 1 ? weights_[1]->cpu_data() : nullptr;
    folds_.Fold(channels, folded_weights.count() / channels, weights_[0]->cpu_data(), bias,
                folded_weights.mutable_cpu_data(), this->blobs_[1]->mutable_cpu_data());
    sources_.Record(weights_, folds_);
  }
  this->Forward_cpu(bottom, top);
}

template class WeightFoldedConvolution<ConvolutionLayer>;
template class WeightFoldedConvolution<DepthwiseConvolutionLayer>;

}  // namespace crema
