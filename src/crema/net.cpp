#include "crema/net.hpp"

#include <algorithm>
#include <sstream>

#include "crema/format/engine_hints.hpp"
#include "crema/format/fork_fields.hpp"
#include "crema/format/insert_splits.hpp"
#include "crema/format/intel_quantization.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"
#include "crema/storage/hdf5.hpp"
#include "crema/util/io.hpp"
#include "crema/util/upgrade_proto.hpp"

namespace crema {

namespace {
// compute_precision shares NVCaffe's Type enum; Crema computes in two of it.
void RequireComputablePrecision(Type precision, const std::string& where) {
  CREMA_REQUIRE(precision == FLOAT || precision == BF16,
                where << ": compute_precision " << Type_Name(precision)
                      << " is not one Crema computes in (FLOAT, BF16)");
}
}  // namespace

// Here, where NetSeams is complete.
template <typename Dtype>
Net<Dtype>::~Net() = default;

template <typename Dtype>
Net<Dtype>::Net(const NetParameter& param, const NetOptions<Dtype>& options) {
  Init(param, options);
}

template <typename Dtype>
Net<Dtype>::Net(const std::string& param_file, Phase phase, int level,
                const std::vector<std::string>* stages) {
  NetParameter param;
  ReadNetParamsFromTextFile(param_file, &param);
  // The caller's phase, level and stages decide which layers are kept.
  param.mutable_state()->set_phase(phase);
  if (stages) {
    for (const auto& stage : *stages) param.mutable_state()->add_stage(stage);
  }
  param.mutable_state()->set_level(level);
  WithOrigin(param_file, [&] { Init(param, NetOptions<Dtype>()); });
}

template <typename Dtype>
void Net<Dtype>::Init(const NetParameter& in_param, const NetOptions<Dtype>& options) {
  log_ = options.log;
  const NetParameter param = Prepare(in_param);
  name_ = param.name();
  debug_info_ = param.debug_info();
  LOG_IF(INFO, log_) << "Initializing net '" << name_ << "' for phase "
                     << (phase_ == TRAIN ? "TRAIN" : "TEST");
  const int num_layers = param.layer_size();
  bottom_vecs_.resize(num_layers);
  top_vecs_.resize(num_layers);
  bottom_id_vecs_.resize(num_layers);
  top_id_vecs_.resize(num_layers);
  param_id_vecs_.resize(num_layers);
  bottom_need_backward_.resize(num_layers);
  bottom_forced_.resize(num_layers);
  Wiring wiring;
  for (int layer_id = 0; layer_id < num_layers; ++layer_id) {
    AddLayer(param, layer_id, options, &wiring);
  }
  WarnOfSharedNamesWithParameters();
  DecideBackward(param.force_backward());
  CollectOutputs(wiring.available_blobs);
  ShareWeights();
  Rewrite(param.force_backward());
  LOG_IF(INFO, log_) << "Network initialization done.";
}

template <typename Dtype>
NetParameter Net<Dtype>::Prepare(const NetParameter& in_param) {
  NetParameter upgraded(in_param);
  UpgradeNetAsNeeded("net '" + in_param.name() + "'", &upgraded);
  phase_ = upgraded.state().phase();
  const std::string net = in_param.name().empty() ? "the net" : "net '" + in_param.name() + "'";
  CREMA_REQUIRE(
      upgraded.layer_size() > 0,
      net << " has no layers (an empty or non-net file?); expected layer { ... } entries");
  NetParameter filtered;
  FilterNet(upgraded, &filtered);
  CREMA_REQUIRE(filtered.layer_size() > 0,
                net << ": none of its " << upgraded.layer_size() << " layers is in the "
                    << (phase_ == TRAIN ? "TRAIN" : "TEST")
                    << " phase (each is left out by its include/exclude rules)");
  CheckForkFields(upgraded, net, {"layer", "layers"});
  RequireComputablePrecision(upgraded.compute_precision(), net);
  for (const LayerParameter& layer : filtered.layer()) CheckLayerSettings(layer);
  NetParameter param;
  InsertSplits(filtered, &param);
  int hints = 0;
  // Each layer runs in the net's phase, precision and convolution algorithm
  // unless it says otherwise.
  for (LayerParameter& layer_param : *param.mutable_layer()) {
    if (upgraded.engine_mode() == NetParameter::FASTEST) {
      hints += ReadEngineHintsAsDefault(&layer_param);
    }
    if (!layer_param.has_phase()) layer_param.set_phase(phase_);
    if (!layer_param.has_compute_precision()) {
      layer_param.set_compute_precision(upgraded.compute_precision());
    }
    // Only where the net sets it, so that the layers a .caffemodel holds
    // carry no field the user did not write.
    if (!layer_param.has_convolution_algorithm() && upgraded.has_convolution_algorithm()) {
      layer_param.set_convolution_algorithm(upgraded.convolution_algorithm());
    }
  }
  LOG_IF(INFO, log_ && hints > 0)
      << net << ": the engine fields of " << hints
      << " layers name Caffe's runtimes (CAFFE, CUDNN, MKL2017, MKLDNN); Crema runs the "
         "fastest body for each, as with DEFAULT (engine_mode: AS_WRITTEN keeps them)";
  return param;
}


// What a layer's own settings say before it is built: the forks' fields it
// sets (format/fork_fields.hpp) and a compute_precision Crema computes in.
template <typename Dtype>
void Net<Dtype>::CheckLayerSettings(const LayerParameter& layer) {
  const std::string where = "layer '" + layer.name() + "' (" + layer.type() + ")";
  CheckForkFields(layer, where);
  CheckIntelQuantization(layer);
  if (layer.has_compute_precision()) RequireComputablePrecision(layer.compute_precision(), where);
}

template <typename Dtype>
void Net<Dtype>::AddLayer(const NetParameter& param, int layer_id, const NetOptions<Dtype>& options,
                          Wiring* wiring) {
  const LayerParameter& layer_param = param.layer(layer_id);
  CREMA_REQUIRE(layer_param.propagate_down_size() == 0 ||
                    layer_param.propagate_down_size() == layer_param.bottom_size(),
                "layer '" << layer_param.name() << "': propagate_down has "
                          << layer_param.propagate_down_size() << " values for "
                          << layer_param.bottom_size() << " bottoms; give one per bottom");
  // Data-parallel training: a training net's shareable layers exist once,
  // built by rank 0's net; the layers of both nets match by position.
  const Net* share_from = phase_ == TRAIN ? options.share_layers_from : nullptr;
  const bool shared = share_from && share_from->layers_[layer_id]->ShareInParallel();
  if (shared) {
    CHECK_EQ(share_from->layer_names_[layer_id], layer_param.name());
    layers_.push_back(share_from->layers_[layer_id]);
  } else {
    layers_.push_back(LayerRegistry<Dtype>::CreateLayer(layer_param));
  }
  layer_names_.push_back(layer_param.name());
  // Layer names need not be unique (Caffe does not ask it): by name, the
  // last layer is found, and weights go to the first (Caffe's rules).
  layer_names_index_[layer_param.name()] = layer_id;
  weights_layer_index_.emplace(layer_param.name(), layer_id);
  LOG_IF(INFO, log_) << "Creating layer " << layer_param.name() << " (" << layer_param.type()
                     << ")";
  ConnectBlobs(param, layer_id, wiring);
  SetUpLayer(layer_id, shared ? share_from : nullptr, options);
  RecordLossWeights(layer_id);
  AppendParams(param, layer_id);
}

// Two layers of one name are Caffe's rule as much as ours, but weights by
// name reach only the first: a later one holding parameters keeps its
// initial values when a model is copied in, which the user should know.
template <typename Dtype>
void Net<Dtype>::WarnOfSharedNamesWithParameters() const {
  for (size_t layer_id = 0; layer_id < layers_.size(); ++layer_id) {
    const int first = weights_layer_index_.at(layer_names_[layer_id]);
    if (first == static_cast<int>(layer_id) || layers_[layer_id]->blobs().empty()) continue;
    LOG(WARNING) << "layers " << first << " and " << layer_id << " are both named '"
                 << layer_names_[layer_id] << "' and layer " << layer_id
                 << " has parameters: weights copied by name go to layer " << first
                 << " only (as in Caffe); rename one to load both";
  }
}

template <typename Dtype>
void Net<Dtype>::ConnectBlobs(const NetParameter& param, int layer_id, Wiring* wiring) {
  const LayerParameter& layer_param = param.layer(layer_id);
  Layer<Dtype>* layer = layers_[layer_id].get();
  for (int bottom_id = 0; bottom_id < layer_param.bottom_size(); ++bottom_id) {
    AppendBottom(param, layer_id, bottom_id, &wiring->available_blobs, &wiring->blob_name_to_idx);
  }
  const int num_top = layer_param.top_size();
  for (int top_id = 0; top_id < num_top; ++top_id) {
    AppendTop(param, layer_id, top_id, &wiring->available_blobs, &wiring->blob_name_to_idx);
    if (layer->ProvidesNetInputs()) {
      const int blob_id = static_cast<int>(blobs_.size()) - 1;
      net_input_blob_indices_.push_back(blob_id);
      net_input_blobs_.push_back(blobs_[blob_id].get());
    }
  }
  // Some layers (losses) create the tops the prototxt left out.
  if (layer->AutoTopBlobs()) {
    const int needed = std::max(layer->MinTopBlobs(), layer->ExactNumTopBlobs());
    for (int top_id = num_top; top_id < needed; ++top_id) {
      AppendTop(param, layer_id, -1, &wiring->available_blobs, &wiring->blob_name_to_idx);
    }
  }
}

template <typename Dtype>
void Net<Dtype>::SetUpLayer(int layer_id, const Net* shared_from,
                            const NetOptions<Dtype>& options) {
  if (shared_from) {
    // Set up once, by rank 0's net; this net's tops take its shapes.
    const auto& shared_tops = shared_from->top_vecs_[layer_id];
    for (size_t top_id = 0; top_id < top_vecs_[layer_id].size(); ++top_id) {
      top_vecs_[layer_id][top_id]->ReshapeLike(*shared_tops[top_id]);
    }
    return;
  }
  Layer<Dtype>* layer = layers_[layer_id].get();
  if (options.resume_state) layer->RestoreResumeState(*options.resume_state);
  try {
    layer->SetUp(bottom_vecs_[layer_id], top_vecs_[layer_id]);
  } catch (const MemoryError& e) {
    throw MemoryError(LayerMemoryMessage(layer_id, "set-up", e));
  }
  if (phase_ == TRAIN && options.solvers_sharing_layers > 1 && layer->ShareInParallel()) {
    layer->SetShared(options.solvers_sharing_layers);
  }
}

template <typename Dtype>
void Net<Dtype>::RecordLossWeights(int layer_id) {
  const Layer<Dtype>* layer = layers_[layer_id].get();
  for (size_t top_id = 0; top_id < top_vecs_[layer_id].size(); ++top_id) {
    const int blob_id = top_id_vecs_[layer_id][top_id];
    if (blob_loss_weights_.size() <= static_cast<size_t>(blob_id)) {
      blob_loss_weights_.resize(blob_id + 1, Dtype(0));
    }
    const Dtype weight = layer->loss(static_cast<int>(top_id));
    blob_loss_weights_[blob_id] = weight;
    LOG_IF(INFO, log_) << "Top shape: " << top_vecs_[layer_id][top_id]->shape_string() << " "
                       << blob_names_[blob_id];
    LOG_IF(INFO, log_ && weight) << "    with loss weight " << weight;
  }
}

template <typename Dtype>
void Net<Dtype>::AppendParams(const NetParameter& param, int layer_id) {
  const LayerParameter& layer_param = param.layer(layer_id);
  Layer<Dtype>* layer = layers_[layer_id].get();
  const int num_param_blobs = static_cast<int>(layer->blobs().size());
  CREMA_REQUIRE(layer_param.param_size() <= num_param_blobs,
                "layer '" << layer_param.name() << "' (" << layer_param.type() << ") has "
                          << num_param_blobs << " parameter blobs but " << layer_param.param_size()
                          << " param specs");
  // A parameter with lr_mult 0 is frozen: no gradient is computed for it.
  for (int param_id = 0; param_id < num_param_blobs; ++param_id) {
    const bool learns =
        param_id >= layer_param.param_size() || layer_param.param(param_id).lr_mult() != 0;
    layer->set_param_propagate_down(param_id, learns && layer->param_propagate_down(param_id));
  }
  for (int param_id = 0; param_id < num_param_blobs; ++param_id) {
    AppendParam(param, layer_id, param_id);
  }
}

// What no layer consumed is the net's output.
template <typename Dtype>
void Net<Dtype>::CollectOutputs(const std::set<std::string>& available_blobs) {
  for (const auto& blob_name : available_blobs) {
    const int blob_id = blob_names_index_[blob_name];
    LOG_IF(INFO, log_) << "This network produces output " << blob_name;
    net_output_blobs_.push_back(blobs_[blob_id].get());
    net_output_blob_indices_.push_back(blob_id);
  }
}

// The layer that created blob `blob_id` (the first to list it as a top).
template <typename Dtype>
std::string Net<Dtype>::ProducerName(int blob_id) const {
  for (size_t layer_id = 0; layer_id < top_id_vecs_.size(); ++layer_id) {
    const auto& tops = top_id_vecs_[layer_id];
    if (std::find(tops.begin(), tops.end(), blob_id) != tops.end()) return layer_names_[layer_id];
  }
  return "?";
}

template <typename Dtype>
void Net<Dtype>::AppendTop(const NetParameter& param, int layer_id, int top_id,
                           std::set<std::string>* available_blobs,
                           std::map<std::string, int>* blob_name_to_idx) {
  const LayerParameter& layer_param = param.layer(layer_id);
  const std::string blob_name =
      (top_id >= 0 && top_id < layer_param.top_size()) ? layer_param.top(top_id) : "(automatic)";
  // A top named like one of the layer's bottoms computes in place.
  if (top_id >= 0 && blob_name_to_idx->count(blob_name) && layer_param.bottom_size() > top_id &&
      layer_param.bottom(top_id) == blob_name) {
    const int blob_id = (*blob_name_to_idx)[blob_name];
    top_vecs_[layer_id].push_back(blobs_[blob_id].get());
    top_id_vecs_[layer_id].push_back(blob_id);
  } else {
    CREMA_REQUIRE(top_id < 0 || blob_name_to_idx->count(blob_name) == 0 ||
                      std::find(layer_param.bottom().begin(), layer_param.bottom().end(),
                                blob_name) == layer_param.bottom().end(),
                  "layer '" << layer_param.name() << "': top '" << blob_name
                            << "' is one of its bottoms but not at the same position; in-place "
                               "computation pairs bottom i with top i");
    // Only an in-place layer may write a blob another layer made: a second
    // producer would silently hide the first one's output.
    CREMA_REQUIRE(top_id < 0 || blob_name_to_idx->count(blob_name) == 0,
                  "top blob '" << blob_name << "' is produced by both layer '"
                               << ProducerName((*blob_name_to_idx)[blob_name]) << "' and layer '"
                               << layer_param.name()
                               << "'; give each output its own name (a layer may reuse a blob "
                                  "name only in place, as its bottom at the same position)");
    // A new blob.
    std::shared_ptr<Blob<Dtype>> blob(new Blob<Dtype>());
    const int blob_id = static_cast<int>(blobs_.size());
    blobs_.push_back(blob);
    blob_names_.push_back(blob_name);
    blob_need_backward_.push_back(false);
    if (top_id >= 0) (*blob_name_to_idx)[blob_name] = blob_id;
    blob_names_index_[blob_name] = blob_id;
    top_id_vecs_[layer_id].push_back(blob_id);
    top_vecs_[layer_id].push_back(blob.get());
  }
  if (top_id >= 0 && available_blobs) available_blobs->insert(blob_name);
}

template <typename Dtype>
int Net<Dtype>::AppendBottom(const NetParameter& param, int layer_id, int bottom_id,
                             std::set<std::string>* available_blobs,
                             std::map<std::string, int>* blob_name_to_idx) {
  const LayerParameter& layer_param = param.layer(layer_id);
  const std::string& blob_name = layer_param.bottom(bottom_id);
  CREMA_REQUIRE(available_blobs->count(blob_name),
                "layer '" << layer_param.name() << "' (" << layer_param.type()
                          << "): unknown bottom blob '" << blob_name << "' (bottom " << bottom_id
                          << ")");
  const int blob_id = (*blob_name_to_idx)[blob_name];
  bottom_vecs_[layer_id].push_back(blobs_[blob_id].get());
  bottom_id_vecs_[layer_id].push_back(blob_id);
  available_blobs->erase(blob_name);
  const bool propagate =
      bottom_id >= layer_param.propagate_down_size() || layer_param.propagate_down(bottom_id);
  bottom_need_backward_[layer_id].push_back(propagate);
  // An explicit `propagate_down: true` asks for the gradient even where
  // nothing below learns (as in Caffe).
  bottom_forced_[layer_id].push_back(layer_param.propagate_down_size() > 0 &&
                                     layer_param.propagate_down(bottom_id));
  return blob_id;
}

template <typename Dtype>
void Net<Dtype>::AppendParam(const NetParameter& param, int layer_id, int param_id) {
  const LayerParameter& layer_param = layers_[layer_id]->layer_param();
  const bool has_spec = param_id < layer_param.param_size();
  const ParamSpec spec = has_spec ? layer_param.param(param_id) : ParamSpec();
  param_display_names_.push_back(spec.name().empty() ? std::to_string(param_id) : spec.name());
  const int net_param_id = static_cast<int>(params_.size());
  params_.push_back(layers_[layer_id]->blobs()[param_id]);
  param_id_vecs_[layer_id].push_back(net_param_id);
  param_layer_indices_.push_back({layer_id, param_id});
  if (spec.name().empty() || !param_names_index_.count(spec.name())) {
    AppendOwnedParam(spec, net_param_id);
  } else {
    AppendTiedParam(spec, layer_id, param_id);
  }
}

// This layer owns the parameter: it is learnable, with its multipliers.
template <typename Dtype>
void Net<Dtype>::AppendOwnedParam(const ParamSpec& spec, int net_param_id) {
  param_owners_.push_back(-1);
  if (!spec.name().empty()) param_names_index_[spec.name()] = net_param_id;
  learnable_param_ids_.push_back(static_cast<int>(learnable_params_.size()));
  learnable_params_.push_back(params_[net_param_id].get());
  has_params_lr_.push_back(spec.has_lr_mult());
  has_params_decay_.push_back(spec.has_decay_mult());
  params_lr_.push_back(spec.lr_mult());
  params_weight_decay_.push_back(spec.decay_mult());
}

// Another layer owns the parameter (same name): the shapes must agree, and
// so must the multipliers both give.
template <typename Dtype>
void Net<Dtype>::AppendTiedParam(const ParamSpec& spec, int layer_id, int param_id) {
  const std::string& name = spec.name();
  const int owner_net_id = param_names_index_[name];
  param_owners_.push_back(owner_net_id);
  const std::pair<int, int>& owner_index = param_layer_indices_[owner_net_id];
  const Blob<Dtype>* blob = layers_[layer_id]->blobs()[param_id].get();
  const Blob<Dtype>* owner_blob = layers_[owner_index.first]->blobs()[owner_index.second].get();
  const std::string& owner_layer = layer_names_[owner_index.first];
  if (spec.share_mode() == ParamSpec::PERMISSIVE) {
    CREMA_REQUIRE(blob->count() == owner_blob->count(),
                  "layer '" << layer_names_[layer_id] << "': shared parameter '" << name << "' has "
                            << blob->count() << " values, its owner layer '" << owner_layer
                            << "' has " << owner_blob->count());
  } else {
    CREMA_REQUIRE(blob->shape() == owner_blob->shape(),
                  "layer '" << layer_names_[layer_id] << "': shared parameter '" << name
                            << "' has shape " << blob->shape_string() << ", its owner layer '"
                            << owner_layer << "' has " << owner_blob->shape_string()
                            << " (use share_mode PERMISSIVE to match counts only)");
  }
  const int learnable_id = learnable_param_ids_[owner_net_id];
  learnable_param_ids_.push_back(learnable_id);
  if (spec.has_lr_mult()) {
    MergeMultiplier(spec.lr_mult(), name, "lr_mult", &has_params_lr_, &params_lr_, learnable_id);
  }
  if (spec.has_decay_mult()) {
    MergeMultiplier(spec.decay_mult(), name, "decay_mult", &has_params_decay_,
                    &params_weight_decay_, learnable_id);
  }
}

// The first layer to give a shared parameter's multiplier sets it; another
// layer may repeat it but not change it.
template <typename Dtype>
void Net<Dtype>::MergeMultiplier(float value, const std::string& param_name, const char* field,
                                 std::vector<bool>* has_values, std::vector<float>* values,
                                 int learnable_id) {
  if ((*has_values)[learnable_id]) {
    CREMA_REQUIRE(value == (*values)[learnable_id],
                  "shared parameter '" << param_name << "' has conflicting " << field << " values");
    return;
  }
  (*has_values)[learnable_id] = true;
  (*values)[learnable_id] = value;
}

// Decides which layers and blobs need gradients: those on a path from a
// learnable parameter (or a forced input) to a loss; with force_backward,
// every layer and every bottom that allows it.
template <typename Dtype>
void Net<Dtype>::DecideBackward(bool force_backward) {
  MarkNeedFromBelow();
  PruneWhatReachesNoLoss();
  if (force_backward) ForceBackward();
  if (log_) {
    for (int layer_id = static_cast<int>(layers_.size()) - 1; layer_id >= 0; --layer_id) {
      VLOG(1) << layer_names_[layer_id]
              << (layer_need_backward_[layer_id] ? " needs backward computation."
                                                 : " does not need backward computation.");
    }
  }
}

// Forward over the layers: a layer needs backward when a parameter of its
// own learns or a bottom's gradient is wanted (forced, or fed from a blob
// that needs one); its tops then need gradients too.
template <typename Dtype>
void Net<Dtype>::MarkNeedFromBelow() {
  const int num_layers = static_cast<int>(layers_.size());
  layer_need_backward_.assign(num_layers, false);
  for (int layer_id = 0; layer_id < num_layers; ++layer_id) {
    bool need_backward = false;
    for (size_t b = 0; b < bottom_id_vecs_[layer_id].size(); ++b) {
      const bool from_below = blob_need_backward_[bottom_id_vecs_[layer_id][b]];
      const bool forced = bottom_forced_[layer_id][b];
      bottom_need_backward_[layer_id][b] =
          forced || (bottom_need_backward_[layer_id][b] && from_below);
      need_backward |= bottom_need_backward_[layer_id][b];
    }
    for (size_t p = 0; p < layers_[layer_id]->blobs().size(); ++p) {
      need_backward |= layers_[layer_id]->param_propagate_down(static_cast<int>(p));
    }
    for (int blob_id : top_id_vecs_[layer_id]) {
      blob_need_backward_[blob_id] = blob_need_backward_[blob_id] || need_backward;
    }
    layer_need_backward_[layer_id] = need_backward;
  }
}

// Walks back from the losses: a layer none of whose tops reaches a loss
// needs no backward, and neither do its bottoms; nor does a layer whose
// tops' gradients all go unused.
template <typename Dtype>
void Net<Dtype>::PruneWhatReachesNoLoss() {
  std::set<std::string> blobs_under_loss;
  std::set<std::string> blobs_skip_backward;
  for (int layer_id = static_cast<int>(layers_.size()) - 1; layer_id >= 0; --layer_id) {
    bool contributes_loss = false;
    bool skip_propagate_down = true;
    for (size_t t = 0; t < top_id_vecs_[layer_id].size(); ++t) {
      const std::string& blob_name = blob_names_[top_id_vecs_[layer_id][t]];
      if (layers_[layer_id]->loss(static_cast<int>(t)) || blobs_under_loss.count(blob_name)) {
        contributes_loss = true;
      }
      if (!blobs_skip_backward.count(blob_name)) skip_propagate_down = false;
      if (contributes_loss && !skip_propagate_down) break;
    }
    if (layer_need_backward_[layer_id] && skip_propagate_down) {
      layer_need_backward_[layer_id] = false;
      std::fill(bottom_need_backward_[layer_id].begin(), bottom_need_backward_[layer_id].end(),
                false);
    }
    if (!contributes_loss) layer_need_backward_[layer_id] = false;
    for (size_t b = 0; b < bottom_id_vecs_[layer_id].size(); ++b) {
      const std::string& blob_name = blob_names_[bottom_id_vecs_[layer_id][b]];
      if (contributes_loss) {
        blobs_under_loss.insert(blob_name);
      } else {
        bottom_need_backward_[layer_id][b] = false;
      }
      if (!bottom_need_backward_[layer_id][b]) blobs_skip_backward.insert(blob_name);
    }
  }
}

template <typename Dtype>
void Net<Dtype>::ForceBackward() {
  for (size_t layer_id = 0; layer_id < layers_.size(); ++layer_id) {
    layer_need_backward_[layer_id] = true;
    for (size_t b = 0; b < bottom_id_vecs_[layer_id].size(); ++b) {
      bottom_need_backward_[layer_id][b] =
          bottom_need_backward_[layer_id][b] ||
          layers_[layer_id]->AllowForceBackward(static_cast<int>(b));
      blob_need_backward_[bottom_id_vecs_[layer_id][b]] =
          blob_need_backward_[bottom_id_vecs_[layer_id][b]] || bottom_need_backward_[layer_id][b];
    }
    for (size_t p = 0; p < layers_[layer_id]->blobs().size(); ++p) {
      layers_[layer_id]->set_param_propagate_down(static_cast<int>(p), true);
    }
  }
}

template <typename Dtype>
void Net<Dtype>::FilterNet(const NetParameter& param, NetParameter* param_filtered) {
  const NetState& state = param.state();
  param_filtered->CopyFrom(param);
  param_filtered->clear_layer();
  for (const LayerParameter& layer : param.layer()) {
    CREMA_REQUIRE(
        layer.include_size() == 0 || layer.exclude_size() == 0,
        "layer '" << layer.name() << "' has both include and exclude rules; give one kind");
    // No include rules means included unless an exclude rule matches.
    bool keep = layer.include_size() == 0;
    for (const NetStateRule& rule : layer.exclude()) {
      if (StateMeetsRule(state, rule, layer.name())) keep = false;
    }
    for (const NetStateRule& rule : layer.include()) {
      if (StateMeetsRule(state, rule, layer.name())) keep = true;
    }
    if (keep) param_filtered->add_layer()->CopyFrom(layer);
  }
}

template <typename Dtype>
bool Net<Dtype>::StateMeetsRule(const NetState& state, const NetStateRule& rule,
                                const std::string& layer_name) {
  if (rule.has_phase() && rule.phase() != state.phase()) return false;
  if (rule.has_min_level() && state.level() < rule.min_level()) return false;
  if (rule.has_max_level() && state.level() > rule.max_level()) return false;
  for (const std::string& stage : rule.stage()) {
    if (std::find(state.stage().begin(), state.stage().end(), stage) == state.stage().end()) {
      return false;
    }
  }
  for (const std::string& stage : rule.not_stage()) {
    if (std::find(state.stage().begin(), state.stage().end(), stage) != state.stage().end()) {
      return false;
    }
  }
  return true;
}

// A net input never given a shape (an Input layer without input_param's
// shape, not reshaped by its caller) has no memory to compute from.
template <typename Dtype>
void Net<Dtype>::RequireShapedInputs() const {
  for (size_t i = 0; i < net_input_blobs_.size(); ++i) {
    const Blob<Dtype>& blob = *net_input_blobs_[i];
    CREMA_REQUIRE(blob.num_axes() > 0 || blob.count() > 0,
                  (name_.empty() ? std::string("the net") : "net '" + name_ + "'")
                      << ": input blob '" << blob_names_[net_input_blob_indices_[i]]
                      << "' has no shape: give its Input layer input_param { shape { dim: "
                         "... } }, or reshape it before the forward pass");
  }
}

// Memory runs out inside some layer's blobs: say which layer, which of its
// tops, and what the user can change.
template <typename Dtype>
std::string Net<Dtype>::LayerMemoryMessage(int layer_id, const char* stage,
                                           const MemoryError& error) const {
  std::ostringstream os;
  os << "layer '" << layer_names_[layer_id] << "' (" << layers_[layer_id]->type() << "), " << stage
     << ", tops";
  for (size_t i = 0; i < top_id_vecs_[layer_id].size(); ++i) {
    const int blob_id = top_id_vecs_[layer_id][i];
    os << (i ? ", '" : " '") << blob_names_[blob_id] << "' " << blobs_[blob_id]->shape_string();
  }
  os << ": " << error.what() << "; reduce the batch size or the blob shapes";
  return os.str();
}

// Callers (the Python API's forward(start=, end=)) pass layer indices.
template <typename Dtype>
void Net<Dtype>::RequireLayerRange(const char* pass, int first, int last) const {
  const int count = static_cast<int>(layers_.size());
  CREMA_REQUIRE(first >= 0 && last < count,
                (name_.empty() ? std::string("the net") : "net '" + name_ + "'")
                    << ": " << pass << " over layers " << first << ".." << last
                    << " asked for; the net has layers 0.." << count - 1);
}

template <typename Dtype>
void Net<Dtype>::Rewrite(bool force_backward) {
  NetGraph<Dtype> graph{
      layers_,      bottom_vecs_,          top_vecs_, bottom_id_vecs_,
      top_id_vecs_, bottom_need_backward_, log_,      phase_ == TEST && !force_backward};
  seams_.reset(new NetSeams{RewriteNet(graph)});
  // Work left pending finishes in layer order (a convolution's move into
  // the blob before the BatchNorm after it normalises the blob).
  std::stable_sort(seams_->list.begin(), seams_->list.end(),
                   [](const Seam& a, const Seam& b) { return a.first < b.first; });
}

template <typename Dtype>
Dtype Net<Dtype>::ForwardFromTo(int start, int end) {
  RequireLayerRange("forward", start, end);
  if (start == 0) RequireShapedInputs();
  for (const Seam& seam : seams_->list) {
    if (seam.begin_forward) seam.begin_forward(start, end);
  }
  Dtype loss = 0;
  for (int i = start; i <= end; ++i) {
    try {
      loss += layers_[i]->Forward(bottom_vecs_[i], top_vecs_[i]);
    } catch (const MemoryError& e) {
      throw MemoryError(LayerMemoryMessage(i, "forward pass", e));
    }
    if (debug_info_) {
      for (Blob<Dtype>* top : top_vecs_[i]) {
        LOG(INFO) << "    [Forward] Layer " << layer_names_[i]
                  << ", top data |x|/n = " << top->asum_data() / std::max(1, top->count());
      }
    }
  }
  for (const Seam& seam : seams_->list) {
    if (seam.finish_forward && seam.first <= end && end < seam.last) seam.finish_forward(end);
  }
  return loss;
}

template <typename Dtype>
const std::vector<Blob<Dtype>*>& Net<Dtype>::Forward(Dtype* loss) {
  const Dtype total =
      layers_.empty() ? Dtype(0) : ForwardFromTo(0, static_cast<int>(layers_.size()) - 1);
  if (loss) *loss = total;
  return net_output_blobs_;
}

template <typename Dtype>
void Net<Dtype>::BackwardFromTo(int start, int end) {
  RequireLayerRange("backward", end, start);
  for (const Seam& seam : seams_->list) {
    if (seam.prepare_backward) seam.prepare_backward(end);
  }
  for (int i = start; i >= end; --i) {
    if (!layer_need_backward_[i]) continue;
    try {
      layers_[i]->Backward(top_vecs_[i], bottom_need_backward_[i], bottom_vecs_[i]);
    } catch (const MemoryError& e) {
      throw MemoryError(LayerMemoryMessage(i, "backward pass", e));
    }
  }
}

template <typename Dtype>
void Net<Dtype>::Backward() {
  if (!layers_.empty()) BackwardFromTo(static_cast<int>(layers_.size()) - 1, 0);
  if (debug_info_) {
    Dtype asum_data = 0, asum_diff = 0, sumsq_data = 0, sumsq_diff = 0;
    for (Blob<Dtype>* param : learnable_params_) {
      asum_data += param->asum_data();
      asum_diff += param->asum_diff();
      sumsq_data += param->sumsq_data();
      sumsq_diff += param->sumsq_diff();
    }
    LOG(INFO) << "    [Backward] All net params (data, diff): L1 norm = (" << asum_data << ", "
              << asum_diff << "); L2 norm = (" << std::sqrt(sumsq_data) << ", "
              << std::sqrt(sumsq_diff) << ")";
  }
}

template <typename Dtype>
void Net<Dtype>::Reshape() {
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i]->Reshape(bottom_vecs_[i], top_vecs_[i]);
}

template <typename Dtype>
void Net<Dtype>::Update() {
  for (Blob<Dtype>* param : learnable_params_) param->Update();
}

template <typename Dtype>
void Net<Dtype>::ClearParamDiffs() {
  for (Blob<Dtype>* param : learnable_params_) {
    if (Context::mode() == Context::GPU) {
#ifdef CREMA_CUDA
      gpu_set(param->count(), Dtype(0), param->mutable_gpu_diff());
#else
      NO_GPU;
#endif
    } else {
      cpu_set(param->count(), Dtype(0), param->mutable_cpu_diff());
    }
  }
}

template <typename Dtype>
void Net<Dtype>::ShareWeights() {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (param_owners_[i] < 0) continue;
    params_[i]->ShareData(*params_[param_owners_[i]]);
    params_[i]->ShareDiff(*params_[param_owners_[i]]);
  }
}

template <typename Dtype>
void Net<Dtype>::ShareTrainedLayersWith(const Net* other) {
  for (size_t i = 0; i < other->layers().size(); ++i) {
    const std::string& source_name = other->layer_names()[i];
    auto it = weights_layer_index_.find(source_name);
    if (it == weights_layer_index_.end()) continue;
    auto& target_blobs = layers_[it->second]->blobs();
    auto& source_blobs = other->layers()[i]->blobs();
    CREMA_REQUIRE(target_blobs.size() == source_blobs.size(),
                  "layer '" << source_name << "' has " << target_blobs.size()
                            << " parameter blobs here and " << source_blobs.size()
                            << " in the net it shares with");
    for (size_t j = 0; j < target_blobs.size(); ++j) {
      CREMA_REQUIRE(target_blobs[j]->shape() == source_blobs[j]->shape(),
                    "layer '" << source_name << "' parameter " << j << ": shape "
                              << target_blobs[j]->shape_string() << " here, "
                              << source_blobs[j]->shape_string() << " in the shared net");
      target_blobs[j]->ShareData(*source_blobs[j]);
    }
  }
}

template <typename Dtype>
void Net<Dtype>::CopyTrainedLayersFrom(const NetParameter& param) {
  ReportCopiedLayers("the trained model", CopyLayers(param), SourceLayerNames(param));
}

template <typename Dtype>
std::vector<std::string> Net<Dtype>::SourceLayerNames(const NetParameter& param) {
  std::vector<std::string> names;
  for (const LayerParameter& layer : param.layer()) {
    if (layer.blobs_size() > 0) names.push_back(layer.name());
  }
  for (const V1LayerParameter& layer : param.layers()) {
    if (layer.blobs_size() > 0) names.push_back(layer.name());
  }
  return names;
}

template <typename Dtype>
std::vector<std::string> Net<Dtype>::CopyLayers(const NetParameter& param) {
  // Old model files hold V1 layers; read both forms.
  NetParameter upgraded;
  const NetParameter* source = &param;
  if (NetNeedsUpgrade(param)) {
    upgraded.CopyFrom(param);
    UpgradeNetAsNeeded("trained model", &upgraded);
    source = &upgraded;
  }
  std::vector<std::string> copied;
  for (const LayerParameter& source_layer : source->layer()) {
    auto it = weights_layer_index_.find(source_layer.name());
    if (it == weights_layer_index_.end()) {
      VLOG(1) << "Ignoring source layer " << source_layer.name();
      continue;
    }
    VLOG(1) << "Copying source layer " << source_layer.name();
    auto& target_blobs = layers_[it->second]->blobs();
    CREMA_REQUIRE(static_cast<int>(target_blobs.size()) == source_layer.blobs_size(),
                  "layer '" << source_layer.name() << "': the trained model has "
                            << source_layer.blobs_size() << " parameter blobs, the net expects "
                            << target_blobs.size());
    for (size_t j = 0; j < target_blobs.size(); ++j) {
      if (!target_blobs[j]->ShapeEquals(source_layer.blobs(static_cast<int>(j)))) {
        Blob<Dtype> source_blob;
        source_blob.FromProto(source_layer.blobs(static_cast<int>(j)), true);
        CREMA_FAIL("layer '" << source_layer.name() << "' parameter " << j
                             << ": shape mismatch: the net expects "
                             << target_blobs[j]->shape_string() << ", the trained model has "
                             << source_blob.shape_string());
      }
      target_blobs[j]->FromProto(source_layer.blobs(static_cast<int>(j)), false);
    }
    if (!target_blobs.empty()) copied.push_back(source_layer.name());
  }
  return copied;
}

namespace {
// "a, b, c" — at most `limit` names, then how many there are in all.
std::string NameList(const std::vector<std::string>& names, size_t limit = 8) {
  if (names.empty()) return "(none)";
  std::ostringstream os;
  for (size_t i = 0; i < std::min(names.size(), limit); ++i) os << (i ? ", " : "") << names[i];
  if (names.size() > limit) os << ", ... (" << names.size() << " in all)";
  return os.str();
}
}  // namespace

// Copying weights that match no layer would leave the net at its random
// initialisation while reporting as if trained: that is an error. Copying
// some (fine-tuning) is said, by name.
template <typename Dtype>
void Net<Dtype>::ReportCopiedLayers(const std::string& source,
                                    const std::vector<std::string>& copied,
                                    const std::vector<std::string>& source_layers) const {
  std::vector<std::string> kept;
  int with_params = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i]->blobs().empty()) continue;
    ++with_params;
    if (std::find(copied.begin(), copied.end(), layer_names_[i]) == copied.end()) {
      kept.push_back(layer_names_[i]);
    }
  }
  const std::string net = name_.empty() ? "the net" : "net '" + name_ + "'";
  if (with_params == 0) {
    LOG_IF(INFO, log_) << source << ": " << net << " has no layers with parameters; nothing copied";
    return;
  }
  CREMA_REQUIRE(!copied.empty(), source
                                     << ": shares no layer name with " << net
                                     << ", so no weights would be copied; the file's layers "
                                        "with weights: "
                                     << NameList(source_layers)
                                     << "; the net's layers with parameters: " << NameList(kept));
  if (kept.empty()) {
    LOG_IF(INFO, log_) << source << ": copied the weights of all " << with_params
                       << " layers with parameters of " << net;
  } else {
    LOG_IF(INFO, log_) << source << ": copied the weights of " << copied.size() << " of "
                       << with_params << " layers with parameters of " << net << " ("
                       << NameList(copied)
                       << "); these keep their initial values: " << NameList(kept);
  }
}

template <typename Dtype>
void Net<Dtype>::CopyTrainedLayersFrom(const std::string& trained_filename) {
  if (EndsWith(trained_filename, ".h5")) {
    CopyTrainedLayersFromHDF5(trained_filename);
  } else {
    CopyTrainedLayersFromBinaryProto(trained_filename);
  }
}

template <typename Dtype>
void Net<Dtype>::CopyTrainedLayersFromBinaryProto(const std::string& trained_filename) {
  NetParameter param;
  ReadProtoFromBinaryFile(trained_filename, &param);
  // An empty (or non-weights) file parses as a NetParameter without layers:
  // copying nothing would leave the net at its random initialisation.
  CREMA_REQUIRE(param.layer_size() > 0 || param.layers_size() > 0,
                trained_filename << ": holds no layers; expected trained weights "
                                    "(a .caffemodel written by a solver or by Net::ToProto)");
  std::vector<std::string> copied;
  try {
    copied = CopyLayers(param);
  } catch (const Error& e) {
    CREMA_FAIL(trained_filename << ": " << e.what());
  }
  ReportCopiedLayers(trained_filename, copied, SourceLayerNames(param));
}

template <typename Dtype>
void Net<Dtype>::CopyTrainedLayersFromHDF5(const std::string& trained_filename) {
  std::map<std::string, std::vector<Blob<Dtype>*>> targets;
  for (const auto& [name, layer_id] : weights_layer_index_) {
    for (auto& blob : layers_[layer_id]->blobs()) targets[name].push_back(blob.get());
  }
  std::vector<std::string> source_layers;
  const std::vector<std::string> copied =
      ReadNetParamsFromHDF5(trained_filename, &targets, &source_layers);
  ReportCopiedLayers(trained_filename, copied, source_layers);
}

template <typename Dtype>
void Net<Dtype>::ToProto(NetParameter* param, bool write_diff) const {
  param->Clear();
  param->set_name(name_);
  for (const auto& layer : layers_) layer->ToProto(param->add_layer(), write_diff);
}

template <typename Dtype>
void Net<Dtype>::ToHDF5(const std::string& filename, bool write_diff) const {
  std::vector<std::pair<std::string, std::vector<const Blob<Dtype>*>>> layers;
  for (size_t i = 0; i < layers_.size(); ++i) {
    std::vector<const Blob<Dtype>*> blobs;
    for (const auto& blob : layers_[i]->blobs()) blobs.push_back(blob.get());
    layers.emplace_back(layer_names_[i], blobs);
  }
  WriteNetParamsToHDF5(filename, layers, write_diff);
}

template <typename Dtype>
int Net<Dtype>::batch_size() const {
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (bottom_vecs_[i].empty() && !top_vecs_[i].empty()) {
      const Blob<Dtype>* first = top_vecs_[i][0];
      return first->num_axes() > 0 ? first->shape(0) : 1;
    }
  }
  return 1;
}

template <typename Dtype>
void Net<Dtype>::AppendResumeState(SolverState* state) const {
  for (const auto& layer : layers_) layer->AppendResumeState(state);
}

template <typename Dtype>
bool Net<Dtype>::has_blob(const std::string& blob_name) const {
  return blob_names_index_.count(blob_name) > 0;
}

template <typename Dtype>
std::shared_ptr<Blob<Dtype>> Net<Dtype>::blob_by_name(const std::string& blob_name) const {
  auto it = blob_names_index_.find(blob_name);
  return it == blob_names_index_.end() ? nullptr : blobs_[it->second];
}

template <typename Dtype>
bool Net<Dtype>::has_layer(const std::string& layer_name) const {
  return layer_names_index_.count(layer_name) > 0;
}

template <typename Dtype>
std::shared_ptr<Layer<Dtype>> Net<Dtype>::layer_by_name(const std::string& layer_name) const {
  auto it = layer_names_index_.find(layer_name);
  return it == layer_names_index_.end() ? nullptr : layers_[it->second];
}

template <typename Dtype>
void Net<Dtype>::Finish() {
  for (const auto& layer : layers_) layer->Finish();
}

INSTANTIATE_CLASS(Net);

}  // namespace crema
