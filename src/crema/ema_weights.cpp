#include "crema/ema_weights.hpp"

#include <sstream>

#include "crema/util/math_functions.hpp"

namespace crema {

template <typename Dtype>
void EmaWeights<Dtype>::Start(const std::vector<Blob<Dtype>*>& weights) {
  average_.clear();
  for (const Blob<Dtype>* blob : weights) {
    average_.push_back(std::make_shared<Blob<Dtype>>(blob->shape()));
    average_.back()->CopyFrom(*blob);
  }
}

template <typename Dtype>
void EmaWeights<Dtype>::Update(const std::vector<Blob<Dtype>*>& weights) {
  CHECK_EQ(weights.size(), average_.size()) << "EmaWeights::Update before Start";
  const bool gpu = Context::mode() == Context::GPU;
  for (size_t i = 0; i < weights.size(); ++i) {
    const int n = weights[i]->count();
    if (gpu) {
#ifdef CREMA_CUDA
      gpu_axpby(n, 1 - decay_, weights[i]->gpu_data(), decay_, average_[i]->mutable_gpu_data());
#endif
    } else {
      cpu_axpby(n, 1 - decay_, weights[i]->cpu_data(), decay_, average_[i]->mutable_cpu_data());
    }
  }
}

template <typename Dtype>
void EmaWeights<Dtype>::Swap(const std::vector<Blob<Dtype>*>& weights) {
  CHECK_EQ(weights.size(), average_.size()) << "EmaWeights::Swap before Start";
  for (size_t i = 0; i < weights.size(); ++i) {
    scratch_.ReshapeLike(*weights[i]);
    scratch_.CopyFrom(*weights[i]);
    weights[i]->CopyFrom(*average_[i]);
    average_[i]->CopyFrom(scratch_);
  }
}

template <typename Dtype>
void EmaWeights<Dtype>::ToState(SolverState* state) const {
  state->clear_ema_weights();
  for (const auto& blob : average_) blob->ToProto(state->add_ema_weights());
}

template <typename Dtype>
void EmaWeights<Dtype>::FromState(const SolverState& state,
                                  const std::vector<Blob<Dtype>*>& weights,
                                  const std::string& origin) {
  if (state.ema_weights_size() == 0) {
    Start(weights);
    return;
  }
  CREMA_REQUIRE(state.ema_weights_size() == static_cast<int>(weights.size()),
                origin << ": holds the moving average of " << state.ema_weights_size()
                       << " weight blobs; this net learns " << weights.size());
  average_.clear();
  for (size_t i = 0; i < weights.size(); ++i) {
    average_.push_back(std::make_shared<Blob<Dtype>>());
    average_.back()->FromProto(state.ema_weights(static_cast<int>(i)));
    CREMA_REQUIRE(average_.back()->shape() == weights[i]->shape(),
                  origin << ": moving average blob " << i << " has shape "
                         << average_.back()->shape_string() << "; the weights "
                         << weights[i]->shape_string());
  }
}

template <typename Dtype>
EmaSwappedIn<Dtype>::EmaSwappedIn(EmaWeights<Dtype>* ema, const std::vector<Blob<Dtype>*>& weights)
    : ema_(ema && ema->started() ? ema : nullptr), weights_(weights) {
  if (ema_) ema_->Swap(weights_);
}

template <typename Dtype>
EmaSwappedIn<Dtype>::~EmaSwappedIn() {
  if (ema_) ema_->Swap(weights_);
}

std::string SlowBatchNormAdvice(const std::vector<const LayerParameter*>& layers) {
  constexpr float kSlowest = 0.99f;  // about 100 batches
  const LayerParameter* first = nullptr;
  int count = 0;
  for (const LayerParameter* layer : layers) {
    if (layer->type() != "BatchNorm") continue;
    if (layer->batch_norm_param().moving_average_fraction() <= kSlowest) continue;
    if (!first) first = layer;
    ++count;
  }
  if (!first) return "";
  std::ostringstream advice;
  advice << "ema_decay averages the BatchNorm statistics too, and " << count
         << " BatchNorm layer(s), first '" << first->name()
         << "', already average theirs slowly (moving_average_fraction "
         << first->batch_norm_param().moving_average_fraction()
         << "): tests may lag the training far behind; 0.99 or less keeps them close";
  return advice.str();
}

INSTANTIATE_CLASS(EmaWeights);
INSTANTIATE_CLASS(EmaSwappedIn);

}  // namespace crema
