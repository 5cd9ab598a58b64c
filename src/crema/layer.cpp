#include "crema/layer.hpp"

#include <algorithm>
#include <string>

#include "crema/util/turnstile.hpp"

namespace crema {

namespace {

// Runs one stage of a layer. An Error raised below it (a blob's shape, a
// filler, a file) gains the layer's name and type (type_of(), asked only
// then: a pass should not pay for it), unless it names the layer already. A
// MemoryError passes as it is: the net names the layer and stage.
template <typename TypeOf, typename Stage>
void NamingTheLayer(const LayerParameter& param, TypeOf type_of, Stage stage) {
  try {
    stage();
  } catch (const MemoryError&) {
    throw;
  } catch (const Error& error) {
    const std::string layer = "layer '" + param.name() + "'";
    if (std::string(error.what()).compare(0, layer.size(), layer) == 0) throw;
    throw Error(layer + " (" + std::string(type_of()) + "): " + error.what());
  }
}

}  // namespace

template <typename Dtype>
Layer<Dtype>::Layer(const LayerParameter& param) : layer_param_(param) {
  phase_ = param.phase();
  blobs_.resize(layer_param_.blobs_size());
  for (int i = 0; i < layer_param_.blobs_size(); ++i) {
    blobs_[i].reset(new Blob<Dtype>());
    // type() is not yet the derived layer's here; the parameter's type is.
    NamingTheLayer(
        param, [&] { return param.type().c_str(); },
        [&] {
          try {
            blobs_[i]->FromProto(layer_param_.blobs(i));
          } catch (const MemoryError&) {
            throw;
          } catch (const Error& error) {
            CREMA_FAIL("blob " << i << ": " << error.what());
          }
        });
  }
}

std::string DataSourceKey(const LayerParameter& param, const std::string& source) {
  return param.name() + ":" + source + ":" + (param.phase() == TRAIN ? "TRAIN" : "TEST");
}

// Here, where Turnstile is complete.
template <typename Dtype>
Layer<Dtype>::~Layer() = default;

template <typename Dtype>
void Layer<Dtype>::SetUp(const std::vector<Blob<Dtype>*>& bottom,
                         const std::vector<Blob<Dtype>*>& top) {
  NamingTheLayer(
      layer_param_, [this] { return type(); },
      [&] {
        CheckBlobCounts(bottom, top);
        LayerSetUp(bottom, top);
        // Every learnable blob gets a gradient unless the net says otherwise.
        param_propagate_down_.resize(blobs_.size(), true);
        Reshape(bottom, top);
        SetLossWeights(top);
      });
}

template <typename Dtype>
Dtype Layer<Dtype>::Forward(const std::vector<Blob<Dtype>*>& bottom,
                            const std::vector<Blob<Dtype>*>& top) {
  // A layer shared by several solver threads is entered by one at a time,
  // in rank order (each solver's index within this process).
  Turnstile* const turnstile = forward_turn_.get();
  TurnstileGuard turn(
      turnstile,
      turnstile ? Context::solver_rank() % std::max(1, Context::local_solver_count()) : 0);
  Dtype total_loss = 0;
  const bool gpu = Context::mode() == Context::GPU;
  NamingTheLayer(
      layer_param_, [this] { return type(); },
      [&] {
        Reshape(bottom, top);
        if (gpu) {
          Forward_gpu(bottom, top);
        } else {
          Forward_cpu(bottom, top);
        }
      });
  // A loss top's diff holds its loss weight (SetLossWeights), so the weighted
  // loss is the dot product of its data and diff.
  for (size_t top_id = 0; top_id < top.size(); ++top_id) {
    if (!loss(static_cast<int>(top_id))) continue;
    const int count = top[top_id]->count();
#ifdef CREMA_CUDA
    if (gpu) {
      Dtype blob_loss = 0;
      gpu_dot(count, top[top_id]->gpu_data(), top[top_id]->gpu_diff(), &blob_loss);
      total_loss += blob_loss;
      continue;
    }
#endif
    total_loss += cpu_dot(count, top[top_id]->cpu_data(), top[top_id]->cpu_diff());
  }
  return total_loss;
}

template <typename Dtype>
void Layer<Dtype>::Backward(const std::vector<Blob<Dtype>*>& top,
                            const std::vector<bool>& propagate_down,
                            const std::vector<Blob<Dtype>*>& bottom) {
  NamingTheLayer(
      layer_param_, [this] { return type(); },
      [&] {
        if (Context::mode() == Context::GPU) {
          Backward_gpu(top, propagate_down, bottom);
        } else {
          Backward_cpu(top, propagate_down, bottom);
        }
      });
}

template <typename Dtype>
void Layer<Dtype>::ToProto(LayerParameter* param, bool write_diff) {
  param->Clear();
  param->CopyFrom(layer_param_);
  param->clear_blobs();
  for (const auto& blob : blobs_) blob->ToProto(param->add_blobs(), write_diff);
}

template <typename Dtype>
void Layer<Dtype>::set_loss(int top_index, Dtype value) {
  if (loss_.size() <= static_cast<size_t>(top_index)) loss_.resize(top_index + 1, Dtype(0));
  loss_[top_index] = value;
}

template <typename Dtype>
void Layer<Dtype>::set_param_propagate_down(int param_id, bool value) {
  if (param_propagate_down_.size() <= static_cast<size_t>(param_id)) {
    param_propagate_down_.resize(param_id + 1, true);
  }
  param_propagate_down_[param_id] = value;
}

template <typename Dtype>
void Layer<Dtype>::SetShared(int solvers) {
  // Invariant: the net shares only layers that ShareInParallel.
  CHECK(ShareInParallel() || solvers <= 1) << type() << " layers cannot be shared";
  forward_turn_.reset(solvers > 1 ? new Turnstile(solvers) : nullptr);
}

namespace {
std::string Plural(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}
}  // namespace

template <typename Dtype>
void Layer<Dtype>::CheckBlobCounts(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int num_bottom = static_cast<int>(bottom.size());
  const int num_top = static_cast<int>(top.size());
  if (ExactNumBottomBlobs() >= 0) {
    CREMA_LAYER_REQUIRE(
        num_bottom == ExactNumBottomBlobs(),
        "takes " << Plural(ExactNumBottomBlobs(), "bottom blob") << ", got " << num_bottom);
  }
  if (MinBottomBlobs() >= 0) {
    CREMA_LAYER_REQUIRE(
        num_bottom >= MinBottomBlobs(),
        "takes at least " << Plural(MinBottomBlobs(), "bottom blob") << ", got " << num_bottom);
  }
  if (MaxBottomBlobs() >= 0) {
    CREMA_LAYER_REQUIRE(
        num_bottom <= MaxBottomBlobs(),
        "takes at most " << Plural(MaxBottomBlobs(), "bottom blob") << ", got " << num_bottom);
  }
  if (ExactNumTopBlobs() >= 0) {
    CREMA_LAYER_REQUIRE(num_top == ExactNumTopBlobs(), "produces "
                                                           << Plural(ExactNumTopBlobs(), "top blob")
                                                           << ", got " << num_top);
  }
  if (MinTopBlobs() >= 0) {
    CREMA_LAYER_REQUIRE(num_top >= MinTopBlobs(), "produces at least "
                                                      << Plural(MinTopBlobs(), "top blob")
                                                      << ", got " << num_top);
  }
  if (MaxTopBlobs() >= 0) {
    CREMA_LAYER_REQUIRE(num_top <= MaxTopBlobs(), "produces at most "
                                                      << Plural(MaxTopBlobs(), "top blob")
                                                      << ", got " << num_top);
  }
  if (EqualNumBottomTopBlobs()) {
    CREMA_LAYER_REQUIRE(num_bottom == num_top, "needs as many tops as bottoms, got "
                                                   << num_bottom << " bottoms and " << num_top
                                                   << " tops");
  }
}

template <typename Dtype>
void Layer<Dtype>::SetLossWeights(const std::vector<Blob<Dtype>*>& top) {
  const int num_loss_weights = layer_param_.loss_weight_size();
  if (num_loss_weights == 0) return;
  CREMA_LAYER_REQUIRE(num_loss_weights == static_cast<int>(top.size()),
                      "has " << num_loss_weights << " loss_weight values for " << top.size()
                             << " tops; give one per top");
  for (int top_id = 0; top_id < static_cast<int>(top.size()); ++top_id) {
    const Dtype loss_weight = layer_param_.loss_weight(top_id);
    if (loss_weight == Dtype(0)) continue;
    set_loss(top_id, loss_weight);
    cpu_set(top[top_id]->count(), loss_weight, top[top_id]->mutable_cpu_diff());
  }
}

INSTANTIATE_CLASS(Layer);

}  // namespace crema
