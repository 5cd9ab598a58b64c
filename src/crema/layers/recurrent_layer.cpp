#include "crema/layers/recurrent_layer.hpp"

#include <sstream>

namespace crema {

namespace {

BlobShape ToBlobShape(const std::vector<int>& dims) {
  BlobShape shape;
  for (int dim : dims) shape.add_dim(dim);
  return shape;
}

template <typename Dtype>
void ZeroData(Blob<Dtype>* blob) {
#ifdef CREMA_CUDA
  if (Context::mode() == Context::GPU) {
    gpu_set(blob->count(), Dtype(0), blob->mutable_gpu_data());
    return;
  }
#endif
  cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_data());
}

template <typename Dtype>
void ZeroDiff(Blob<Dtype>* blob) {
#ifdef CREMA_CUDA
  if (Context::mode() == Context::GPU) {
    gpu_set(blob->count(), Dtype(0), blob->mutable_gpu_diff());
    return;
  }
#endif
  cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
}

template <typename Dtype>
Blob<Dtype>* RequireBlob(const Net<Dtype>& net, const std::string& name) {
  Blob<Dtype>* blob = net.blob_by_name(name).get();
  // Invariant: the layer names these blobs itself when it writes the net.
  CHECK(blob) << "the unrolled net has no blob '" << name << "'";
  return blob;
}

}  // namespace

template <typename Dtype>
int RecurrentLayer<Dtype>::NumExposedStates() const {
  return this->layer_param_.recurrent_param().expose_hidden()
             ? static_cast<int>(RecurrentStateNames().size())
             : 0;
}

template <typename Dtype>
void RecurrentLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const RecurrentParameter& param = this->layer_param_.recurrent_param();
  CREMA_LAYER_REQUIRE(param.num_output() > 0,
                      "recurrent_param.num_output must be positive, got " << param.num_output());
  expose_hidden_ = param.expose_hidden();
  static_input_ = static_cast<int>(bottom.size()) > 2 + NumExposedStates();
  unrolled_net_.reset();
  CheckBottomShapes(bottom);
  num_timesteps_ = bottom[0]->shape(0);
  num_streams_ = bottom[0]->shape(1);
  input_dim_ = bottom[0]->count(2);
  static_dim_ = static_input_ ? bottom[2]->count(1) : 0;
  BuildUnrolledNet(bottom);
  AdoptUnrolledNetParams();
  carried_states_.clear();
  if (!expose_hidden_) {
    for (size_t i = 0; i < initial_states_.size(); ++i) {
      carried_states_.emplace_back(new Blob<Dtype>());
    }
    ResetCarriedStates();
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::CheckBottomShapes(const std::vector<Blob<Dtype>*>& bottom) const {
  const Blob<Dtype>& x = *bottom[0];
  CREMA_LAYER_REQUIRE(
      x.num_axes() >= 3,
      "x (bottom 0) must be T x N x (input), with at least 3 axes; got shape " << x.shape_string());
  const int num_timesteps = x.shape(0);
  const int num_streams = x.shape(1);
  CREMA_LAYER_REQUIRE(
      num_timesteps > 0 && num_streams > 0 && x.count(2) > 0,
      "x (bottom 0) must hold at least one step of one stream; got shape " << x.shape_string());
  const Blob<Dtype>& cont = *bottom[1];
  CREMA_LAYER_REQUIRE(
      cont.shape() == std::vector<int>({num_timesteps, num_streams}),
      "cont (bottom 1) must have shape T x N = " << num_timesteps << " x " << num_streams
                                                 << " like x; got shape " << cont.shape_string());
  if (static_input_) {
    const Blob<Dtype>& x_static = *bottom[2];
    CREMA_LAYER_REQUIRE(x_static.num_axes() >= 2 && x_static.shape(0) == num_streams,
                        "x_static (bottom 2) must be N x (input) with N = "
                            << num_streams << " and at least 2 axes; got shape "
                            << x_static.shape_string());
  }
  if (unrolled_net_) {
    CREMA_LAYER_REQUIRE(x.count(2) == input_dim_, "x (bottom 0) has "
                                                      << x.count(2)
                                                      << " values per step and stream; the layer "
                                                         "was set up for "
                                                      << input_dim_);
    CREMA_LAYER_REQUIRE(!static_input_ || bottom[2]->count(1) == static_dim_,
                        "x_static (bottom 2) has "
                            << bottom[2]->count(1)
                            << " values per stream; the layer was set up for " << static_dim_);
  }
  const std::vector<int> state_shape{1, num_streams, num_output()};
  const std::vector<std::string> state_names = RecurrentStateNames();
  const int first_state = 2 + (static_input_ ? 1 : 0);
  for (int i = 0; i < NumExposedStates(); ++i) {
    const Blob<Dtype>& state = *bottom[first_state + i];
    CREMA_LAYER_REQUIRE(state.shape() == state_shape,
                        "the initial state " << AtStep(state_names[i], 0) << " (bottom "
                                             << first_state + i << ") must have shape 1 x N x "
                                             << "num_output = " << ShapeString(state_shape)
                                             << "; got shape " << state.shape_string());
  }
}

template <typename Dtype>
LayerParameter* RecurrentLayer<Dtype>::AddLayer(const std::string& type, const std::string& name,
                                                const std::vector<std::string>& bottoms,
                                                const std::vector<std::string>& tops,
                                                NetParameter* net_param) {
  LayerParameter* layer = net_param->add_layer();
  layer->set_type(type);
  layer->set_name(name);
  for (const auto& bottom : bottoms) layer->add_bottom(bottom);
  for (const auto& top : tops) layer->add_top(top);
  return layer;
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AddInnerProduct(const std::string& name, const std::string& bottom,
                                            const std::string& top, int num_output, int axis,
                                            const std::vector<std::string>& param_names,
                                            NetParameter* net_param) const {
  // Invariant: the callers here name a weight, and a bias or not.
  CHECK(param_names.size() == 1 || param_names.size() == 2);
  const RecurrentParameter& recurrent_param = this->layer_param_.recurrent_param();
  LayerParameter* layer = AddLayer("InnerProduct", name, {bottom}, {top}, net_param);
  InnerProductParameter* inner_product = layer->mutable_inner_product_param();
  inner_product->set_num_output(num_output);
  inner_product->set_axis(axis);
  inner_product->set_bias_term(param_names.size() == 2);
  *inner_product->mutable_weight_filler() = recurrent_param.weight_filler();
  if (inner_product->bias_term()) {
    *inner_product->mutable_bias_filler() = recurrent_param.bias_filler();
  }
  // Every step names the same parameters, so the net shares them.
  for (const auto& param_name : param_names) layer->add_param()->set_name(param_name);
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AddSliceOverTime(const std::string& bottom,
                                             const std::string& step_prefix,
                                             NetParameter* net_param) const {
  std::vector<std::string> steps;
  for (int t = 1; t <= num_timesteps_; ++t) steps.push_back(AtStep(step_prefix, t));
  LayerParameter* slice = AddLayer("Slice", step_prefix + "_slice", {bottom}, steps, net_param);
  slice->mutable_slice_param()->set_axis(0);
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AddConcatOverTime(const std::string& step_prefix,
                                              const std::string& top,
                                              NetParameter* net_param) const {
  std::vector<std::string> steps;
  for (int t = 1; t <= num_timesteps_; ++t) steps.push_back(AtStep(step_prefix, t));
  // A Concat of one bottom would take that bottom's gradient memory, which
  // moves when the bottom is a split; a Split keeps a gradient of its own,
  // so the top's gradient stays where this layer's top shares it.
  if (num_timesteps_ == 1) {
    AddLayer("Split", top + "_copy", steps, {top}, net_param);
    return;
  }
  LayerParameter* concat = AddLayer("Concat", top + "_concat", steps, {top}, net_param);
  concat->mutable_concat_param()->set_axis(0);
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AddInputProjections(const std::string& projection,
                                                const std::string& weight_name,
                                                const std::string& bias_name,
                                                const std::string& static_weight_name, int dim,
                                                NetParameter* net_param) const {
  // One product over all T steps is cheaper than T small ones.
  AddInnerProduct(projection, "x", projection, dim, 2, {weight_name, bias_name}, net_param);
  if (static_input_) {
    const std::string static_projection = projection + "_static";
    AddInnerProduct(static_projection, "x_static", static_projection + "_preshape", dim, 1,
                    {static_weight_name}, net_param);
    // As one step, [1, N, dim], so it adds to each step's input; N is
    // inferred so a new batch size needs no new net.
    LayerParameter* reshape =
        AddLayer("Reshape", static_projection + "_reshape", {static_projection + "_preshape"},
                 {static_projection}, net_param);
    BlobShape* shape = reshape->mutable_reshape_param()->mutable_shape();
    shape->add_dim(1);
    shape->add_dim(-1);
    shape->add_dim(dim);
  }
  AddSliceOverTime(projection, projection, net_param);
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AddContinuedState(const std::string& state, int t,
                                              NetParameter* net_param) {
  const std::string continued = AtStep(state + "_conted", t - 1);
  LayerParameter* scale = AddLayer("Scale", continued, {AtStep(state, t - 1), AtStep("cont", t)},
                                   {continued}, net_param);
  scale->mutable_scale_param()->set_axis(0);
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AddInputLayer(const std::vector<Blob<Dtype>*>& bottom,
                                          NetParameter* net_param) const {
  LayerParameter* input = AddLayer("Input", "input", {}, {"x", "cont"}, net_param);
  InputParameter* input_param = input->mutable_input_param();
  *input_param->add_shape() = ToBlobShape(bottom[0]->shape());
  *input_param->add_shape() = ToBlobShape(bottom[1]->shape());
  if (static_input_) {
    input->add_top("x_static");
    *input_param->add_shape() = ToBlobShape(bottom[2]->shape());
  }
  for (const auto& state : RecurrentStateNames()) {
    input->add_top(AtStep(state, 0));
    *input_param->add_shape() = ToBlobShape({1, bottom[0]->shape(1), num_output()});
  }
}

template <typename Dtype>
NetParameter RecurrentLayer<Dtype>::UnrolledNetParam(
    const std::vector<Blob<Dtype>*>& bottom) const {
  const std::string& layer_name = this->layer_param_.name();
  NetParameter net_param;
  net_param.set_name(layer_name.empty() ? "unrolled" : layer_name + "_unrolled");
  net_param.mutable_state()->set_phase(this->phase_);
  // x, x_static and the initial states enter as inputs, which no layer of
  // the net would otherwise give a gradient.
  net_param.set_force_backward(true);
  net_param.set_debug_info(this->layer_param_.recurrent_param().debug_info());
  AddInputLayer(bottom, &net_param);
  AddSliceOverTime("cont", "cont", &net_param);
  FillUnrolledNet(&net_param);
  // Each final state gets a blob of its own, whose gradient (from an exposed
  // top, or zero) adds to what the later steps give the state.
  for (const auto& state : RecurrentStateNames()) {
    AddLayer("Split", state + "_T_copy", {AtStep(state, num_timesteps_)}, {state + "_T"},
             &net_param);
  }
  // Parameters that will take the memory of blobs_ need no random fill,
  // which would only move the random stream.
  if (!this->blobs_.empty()) {
    for (LayerParameter& layer : *net_param.mutable_layer()) {
      if (!layer.has_inner_product_param()) continue;
      layer.mutable_inner_product_param()->clear_weight_filler();
      layer.mutable_inner_product_param()->clear_bias_filler();
    }
  }
  if (!layer_name.empty()) {
    for (LayerParameter& layer : *net_param.mutable_layer()) {
      layer.set_name(layer_name + "_" + layer.name());
    }
  }
  return net_param;
}

template <typename Dtype>
void RecurrentLayer<Dtype>::BuildUnrolledNet(const std::vector<Blob<Dtype>*>& bottom) {
  const NetParameter net_param = UnrolledNetParam(bottom);
  VLOG(1) << "Layer '" << this->layer_param_.name() << "' (" << this->type() << ") unrolled over "
          << num_timesteps_ << " steps:\n"
          << net_param.DebugString();
  // The unrolled net has T copies of each step and is no part of the user's
  // net: its construction logs only when VLOG(1) is on.
  NetOptions<Dtype> options;
  options.log = VLOG_IS_ON(1);
  unrolled_net_.reset(new Net<Dtype>(net_param, options));
  const Net<Dtype>& net = *unrolled_net_;
  x_input_ = RequireBlob(net, "x");
  cont_input_ = RequireBlob(net, "cont");
  x_static_input_ = static_input_ ? RequireBlob(net, "x_static") : nullptr;
  output_ = RequireBlob(net, OutputBlobName());
  initial_states_.clear();
  final_states_.clear();
  for (const auto& state : RecurrentStateNames()) {
    initial_states_.push_back(RequireBlob(net, AtStep(state, 0)));
    final_states_.push_back(RequireBlob(net, state + "_T"));
  }
  // Owners come first in the net's order, so a shared parameter's owner
  // already has its index.
  param_blob_index_.clear();
  int num_owned = 0;
  for (int owner : net.param_owners()) {
    param_blob_index_.push_back(owner < 0 ? num_owned++ : param_blob_index_[owner]);
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AdoptUnrolledNetParams() {
  const auto& params = unrolled_net_->params();
  const auto& owners = unrolled_net_->param_owners();
  std::vector<int> owned;
  for (size_t k = 0; k < params.size(); ++k) {
    if (owners[k] < 0) owned.push_back(static_cast<int>(k));
  }
  if (this->blobs_.empty()) {
    for (int k : owned) this->blobs_.push_back(params[k]);
    return;
  }
  CREMA_LAYER_REQUIRE(this->blobs_.size() == owned.size(),
                      "has " << this->blobs_.size() << " parameter blobs; this configuration needs "
                             << owned.size());
  for (size_t i = 0; i < owned.size(); ++i) {
    Blob<Dtype>& blob = *this->blobs_[i];
    const Blob<Dtype>& expected = *params[owned[i]];
    CREMA_LAYER_REQUIRE(SameShapeButLeadingOnes(blob.shape(), expected.shape()),
                        "parameter " << i << " (" << unrolled_net_->param_display_names()[owned[i]]
                                     << ") has shape " << blob.shape_string()
                                     << "; this configuration needs "
                                     << ShapeString(expected.shape()));
    blob.Reshape(expected.shape());
  }
  AliasParamsInUnrolledNet();
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AliasParamsInUnrolledNet() {
  const auto& params = unrolled_net_->params();
  const auto& owners = unrolled_net_->param_owners();
  for (size_t k = 0; k < params.size(); ++k) {
    if (owners[k] >= 0) continue;
    Blob<Dtype>* param = params[k].get();
    const Blob<Dtype>& blob = *this->blobs_[param_blob_index_[k]];
    if (param == &blob) continue;
    param->ShareData(blob);
    param->ShareDiff(blob);
  }
  unrolled_net_->ShareWeights();
}

template <typename Dtype>
void RecurrentLayer<Dtype>::SyncParamPropagateDown() {
  const auto& layer_indices = unrolled_net_->param_layer_indices();
  for (size_t k = 0; k < layer_indices.size(); ++k) {
    unrolled_net_->layers()[layer_indices[k].first]->set_param_propagate_down(
        layer_indices[k].second, this->param_propagate_down(param_blob_index_[k]));
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::ResetCarriedStates() {
  for (auto& state : carried_states_) {
    state->Reshape({1, num_streams_, num_output()});
    ZeroData(state.get());
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  CheckBottomShapes(bottom);
  // The unrolled graph depends on T: a new T needs a new net, on the same
  // parameter memory.
  if (bottom[0]->shape(0) != num_timesteps_) {
    num_timesteps_ = bottom[0]->shape(0);
    BuildUnrolledNet(bottom);
    AdoptUnrolledNetParams();
  }
  // States carried from other streams mean nothing for a new batch size.
  if (bottom[0]->shape(1) != num_streams_) {
    num_streams_ = bottom[0]->shape(1);
    ResetCarriedStates();
  }
  AliasInputsAndOutputs(bottom, top);
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AliasInputsAndOutputs(const std::vector<Blob<Dtype>*>& bottom,
                                                  const std::vector<Blob<Dtype>*>& top) {
  // Inputs share the bottoms' data but keep their own diffs: Backward hands
  // them on only where propagate_down asks for them.
  x_input_->ReshapeLike(*bottom[0]);
  x_input_->ShareData(*bottom[0]);
  cont_input_->ReshapeLike(*bottom[1]);
  cont_input_->ShareData(*bottom[1]);
  if (static_input_) {
    x_static_input_->ReshapeLike(*bottom[2]);
    x_static_input_->ShareData(*bottom[2]);
  }
  const int first_state = 2 + (static_input_ ? 1 : 0);
  for (size_t i = 0; i < initial_states_.size(); ++i) {
    initial_states_[i]->Reshape({1, num_streams_, num_output()});
    if (expose_hidden_) initial_states_[i]->ShareData(*bottom[first_state + i]);
  }
  unrolled_net_->Reshape();
  top[0]->ReshapeLike(*output_);
  if (expose_hidden_) {
    for (size_t i = 0; i < final_states_.size(); ++i) top[1 + i]->ReshapeLike(*final_states_[i]);
  }
  AliasOutputs(top);
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AliasOutputs(const std::vector<Blob<Dtype>*>& top) {
  top[0]->ShareData(*output_);
  top[0]->ShareDiff(*output_);
  if (expose_hidden_) {
    for (size_t i = 0; i < final_states_.size(); ++i) {
      top[1 + i]->ShareData(*final_states_[i]);
      top[1 + i]->ShareDiff(*final_states_[i]);
    }
  }
}

// Serves both devices: the unrolled net runs each of its layers on the
// current one, and the copies below follow the mode.
template <typename Dtype>
void RecurrentLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  AliasParamsInUnrolledNet();
  if (!expose_hidden_) {
    for (size_t i = 0; i < carried_states_.size(); ++i) {
      initial_states_[i]->CopyFrom(*carried_states_[i]);
    }
  }
  unrolled_net_->Forward();
  // The final states (and the output of one step) are Split tops, which
  // take their bottoms' memory only as they run forward.
  AliasOutputs(top);
  if (!expose_hidden_) {
    for (size_t i = 0; i < carried_states_.size(); ++i) {
      carried_states_[i]->CopyFrom(*final_states_[i]);
    }
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  CREMA_LAYER_REQUIRE(!propagate_down[1],
                      "cannot backpropagate to cont (bottom 1): the sequence continuation "
                      "indicators have no gradient");
  SyncParamPropagateDown();
  // Unexposed final states only start the next batch, whose loss does not
  // reach back into this one.
  if (!expose_hidden_) {
    for (Blob<Dtype>* state : final_states_) ZeroDiff(state);
  }
  unrolled_net_->Backward();
  if (propagate_down[0]) bottom[0]->CopyFrom(*x_input_, true);
  if (static_input_ && propagate_down[2]) bottom[2]->CopyFrom(*x_static_input_, true);
  const int first_state = 2 + (static_input_ ? 1 : 0);
  for (int i = 0; i < NumExposedStates(); ++i) {
    if (propagate_down[first_state + i]) {
      bottom[first_state + i]->CopyFrom(*initial_states_[i], true);
    }
  }
}

INSTANTIATE_CLASS(RecurrentLayer);

}  // namespace crema
