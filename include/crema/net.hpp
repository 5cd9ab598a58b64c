// Net: a directed acyclic graph of layers connected by named blobs, built from
// a NetParameter (filtered by phase, level and stages), run forward to compute
// the loss and backward to compute every learnable parameter's gradient.
#ifndef CREMA_NET_HPP_
#define CREMA_NET_HPP_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "crema/blob.hpp"
#include "crema/common.hpp"
#include "crema/layer.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

template <typename Dtype>
class Net;
// The seams graph rewrites leave (src/crema/net_rewrites/net_rewrite.hpp).
struct NetSeams;

// What a net is built with besides its NetParameter.
template <typename Dtype>
struct NetOptions {
  // Data-parallel training: a training net takes the layers that
  // ShareInParallel() from this net (rank 0's) instead of building its own.
  const Net<Dtype>* share_layers_from = nullptr;
  // Data-parallel training: how many solvers' training nets use the
  // shareable layers this net builds (so that they guard their state).
  int solvers_sharing_layers = 1;
  // Resuming: the snapshot's state. Each layer the net builds takes its
  // position in its input from it (RestoreResumeState) before SetUp.
  const SolverState* resume_state = nullptr;
  // Logs the construction (layers, top shapes, outputs). Off for the
  // solvers other than rank 0 and for nets built inside a layer.
  bool log = true;
};

template <typename Dtype>
class Net {
 public:
  explicit Net(const NetParameter& param, const NetOptions<Dtype>& options = NetOptions<Dtype>());
  // Reads (and upgrades) a prototxt and builds it for the given phase, level
  // and stages.
  Net(const std::string& param_file, Phase phase, int level = 0,
      const std::vector<std::string>* stages = nullptr);
  virtual ~Net();

  // Runs every layer forward; returns the output blobs and, if asked, the loss.
  const std::vector<Blob<Dtype>*>& Forward(Dtype* loss = nullptr);
  // Runs layers start..end inclusive and returns their summed loss (for
  // callers that feed or read blobs between layers, e.g. Python's
  // forward(start=, end=)).
  Dtype ForwardFromTo(int start, int end);
  Dtype ForwardFrom(int start) {
    return ForwardFromTo(start, static_cast<int>(layers_.size()) - 1);
  }
  Dtype ForwardTo(int end) { return ForwardFromTo(0, end); }

  // Gradients of the loss with respect to every blob and parameter that needs one.
  void Backward();
  // Runs the backward pass of layers start down to end inclusive.
  void BackwardFromTo(int start, int end);
  void BackwardFrom(int start) { BackwardFromTo(start, 0); }
  void BackwardTo(int end) { BackwardFromTo(static_cast<int>(layers_.size()) - 1, end); }

  Dtype ForwardBackward() {
    Dtype loss;
    Forward(&loss);
    Backward();
    return loss;
  }

  // Propagates new input shapes through every layer.
  void Reshape();
  // data -= diff for every learnable parameter (the solver scales diff first).
  void Update();
  // Zeroes the gradients of the learnable parameters.
  void ClearParamDiffs();
  // Makes shared parameters (same ParamSpec name) use their owner's memory.
  void ShareWeights();

  // Makes this net use other's parameter memory (a test net sharing the train net's weights).
  void ShareTrainedLayersWith(const Net* other);
  // Copies parameters from a trained net by layer name. Layers absent from
  // the source keep their values (and are named in the log); a blob of a
  // different shape, or a source that shares no layer with the net, is a user
  // error naming the layers.
  void CopyTrainedLayersFrom(const NetParameter& param);
  // From a .caffemodel (binary NetParameter) or a .caffemodel.h5 / .h5 file.
  void CopyTrainedLayersFrom(const std::string& trained_filename);
  void CopyTrainedLayersFromBinaryProto(const std::string& trained_filename);
  void CopyTrainedLayersFromHDF5(const std::string& trained_filename);
  // Writes the net's configuration and parameters (a .caffemodel's content).
  void ToProto(NetParameter* param, bool write_diff = false) const;
  // Writes the parameters to an HDF5 file (Caffe's layout: /data/<layer>/<i>).
  void ToHDF5(const std::string& filename, bool write_diff = false) const;
  // The end of a run: every layer's Finish (HDF5Output writes its file).
  void Finish();

  const std::string& name() const { return name_; }
  Phase phase() const { return phase_; }
  const std::vector<std::string>& layer_names() const { return layer_names_; }
  const std::vector<std::string>& blob_names() const { return blob_names_; }
  const std::vector<std::shared_ptr<Blob<Dtype>>>& blobs() const { return blobs_; }
  const std::vector<std::shared_ptr<Layer<Dtype>>>& layers() const { return layers_; }
  const std::vector<std::vector<Blob<Dtype>*>>& bottom_vecs() const { return bottom_vecs_; }
  const std::vector<std::vector<Blob<Dtype>*>>& top_vecs() const { return top_vecs_; }
  const std::vector<std::vector<int>>& bottom_id_vecs() const { return bottom_id_vecs_; }
  const std::vector<std::vector<int>>& top_id_vecs() const { return top_id_vecs_; }
  const std::vector<std::vector<bool>>& bottom_need_backward() const {
    return bottom_need_backward_;
  }
  const std::vector<bool>& layer_need_backward() const { return layer_need_backward_; }
  const std::vector<Dtype>& blob_loss_weights() const { return blob_loss_weights_; }
  // Every parameter blob, shared ones included, in layer order.
  const std::vector<std::shared_ptr<Blob<Dtype>>>& params() const { return params_; }
  // The parameters the solver updates (owners only), with their multipliers.
  const std::vector<Blob<Dtype>*>& learnable_params() const { return learnable_params_; }
  const std::vector<float>& params_lr() const { return params_lr_; }
  const std::vector<bool>& has_params_lr() const { return has_params_lr_; }
  const std::vector<float>& params_weight_decay() const { return params_weight_decay_; }
  const std::vector<bool>& has_params_decay() const { return has_params_decay_; }
  // For each parameter, the index of the parameter it shares (-1: its own).
  const std::vector<int>& param_owners() const { return param_owners_; }
  const std::vector<std::string>& param_display_names() const { return param_display_names_; }
  const std::map<std::string, int>& param_names_index() const { return param_names_index_; }
  const std::vector<std::pair<int, int>>& param_layer_indices() const {
    return param_layer_indices_;
  }

  int num_inputs() const { return static_cast<int>(net_input_blobs_.size()); }
  int num_outputs() const { return static_cast<int>(net_output_blobs_.size()); }
  const std::vector<Blob<Dtype>*>& input_blobs() const { return net_input_blobs_; }
  const std::vector<Blob<Dtype>*>& output_blobs() const { return net_output_blobs_; }
  const std::vector<int>& input_blob_indices() const { return net_input_blob_indices_; }
  const std::vector<int>& output_blob_indices() const { return net_output_blob_indices_; }

  bool has_blob(const std::string& blob_name) const;
  // Null when there is no such blob.
  std::shared_ptr<Blob<Dtype>> blob_by_name(const std::string& blob_name) const;
  bool has_layer(const std::string& layer_name) const;
  std::shared_ptr<Layer<Dtype>> layer_by_name(const std::string& layer_name) const;

  // Keeps the layers whose include/exclude rules match param.state().
  static void FilterNet(const NetParameter& param, NetParameter* param_filtered);
  static bool StateMeetsRule(const NetState& state, const NetStateRule& rule,
                             const std::string& layer_name);

  // Items per forward pass: the leading dimension of the first blob that a
  // source layer (one without bottoms: Data, Input, HDF5Data...) produces;
  // 1 for a net without one.
  int batch_size() const;

  // Adds every layer's position in its input to a snapshot's state.
  void AppendResumeState(SolverState* state) const;

 private:
  // The wiring state of Init: blobs by name, and those no layer consumed yet.
  struct Wiring {
    std::map<std::string, int> blob_name_to_idx;
    std::set<std::string> available_blobs;
  };

  void Init(const NetParameter& param, const NetOptions<Dtype>& options);
  // Upgrades, filters by the net's state and inserts splits.
  NetParameter Prepare(const NetParameter& in_param);
  static void CheckLayerSettings(const LayerParameter& layer);
  void AddLayer(const NetParameter& param, int layer_id, const NetOptions<Dtype>& options,
                Wiring* wiring);
  void ConnectBlobs(const NetParameter& param, int layer_id, Wiring* wiring);
  void WarnOfSharedNamesWithParameters() const;
  void SetUpLayer(int layer_id, const Net* shared_from, const NetOptions<Dtype>& options);
  void RecordLossWeights(int layer_id);
  void AppendParams(const NetParameter& param, int layer_id);
  void CollectOutputs(const std::set<std::string>& available_blobs);
  std::string ProducerName(int blob_id) const;
  void RequireLayerRange(const char* pass, int first, int last) const;
  std::string LayerMemoryMessage(int layer_id, const char* stage, const MemoryError& error) const;
  // Copies the blobs of the layers both have; returns the names of those copied.
  std::vector<std::string> CopyLayers(const NetParameter& param);
  static std::vector<std::string> SourceLayerNames(const NetParameter& param);
  void ReportCopiedLayers(const std::string& source, const std::vector<std::string>& copied,
                          const std::vector<std::string>& source_layers) const;
  void AppendTop(const NetParameter& param, int layer_id, int top_id,
                 std::set<std::string>* available_blobs,
                 std::map<std::string, int>* blob_name_to_idx);
  int AppendBottom(const NetParameter& param, int layer_id, int bottom_id,
                   std::set<std::string>* available_blobs,
                   std::map<std::string, int>* blob_name_to_idx);
  void AppendParam(const NetParameter& param, int layer_id, int param_id);
  void AppendOwnedParam(const ParamSpec& spec, int net_param_id);
  void AppendTiedParam(const ParamSpec& spec, int layer_id, int param_id);
  static void MergeMultiplier(float value, const std::string& param_name, const char* field,
                              std::vector<bool>* has_values, std::vector<float>* values,
                              int learnable_id);
  // Runs the graph rewrites (src/crema/net_rewrites/) and keeps their seams;
  // force_backward: the net's field (a TEST net without it runs forward).
  void Rewrite(bool force_backward);
  void DecideBackward(bool force_backward);
  void MarkNeedFromBelow();
  void PruneWhatReachesNoLoss();
  void RequireShapedInputs() const;
  void ForceBackward();

  std::string name_;
  Phase phase_ = TRAIN;
  std::vector<std::shared_ptr<Layer<Dtype>>> layers_;
  std::vector<std::string> layer_names_;
  // By name: the last layer of that name (layer_by_name), and the first,
  // which weights copied by name go to (Caffe's two rules).
  std::map<std::string, int> layer_names_index_;
  std::map<std::string, int> weights_layer_index_;
  std::vector<bool> layer_need_backward_;
  // What the graph rewrites left for every pass to call (net_rewrites/net_rewrite.hpp).
  std::unique_ptr<NetSeams> seams_;
  std::vector<std::shared_ptr<Blob<Dtype>>> blobs_;
  std::vector<std::string> blob_names_;
  std::map<std::string, int> blob_names_index_;
  std::vector<bool> blob_need_backward_;
  std::vector<std::vector<Blob<Dtype>*>> bottom_vecs_;
  std::vector<std::vector<int>> bottom_id_vecs_;
  std::vector<std::vector<bool>> bottom_need_backward_;
  // Bottoms whose gradient the prototxt asks for explicitly.
  std::vector<std::vector<bool>> bottom_forced_;
  std::vector<std::vector<Blob<Dtype>*>> top_vecs_;
  std::vector<std::vector<int>> top_id_vecs_;
  std::vector<Dtype> blob_loss_weights_;
  std::vector<std::vector<int>> param_id_vecs_;
  std::vector<int> param_owners_;
  std::vector<std::string> param_display_names_;
  std::vector<std::pair<int, int>> param_layer_indices_;
  std::map<std::string, int> param_names_index_;
  std::vector<int> net_input_blob_indices_;
  std::vector<int> net_output_blob_indices_;
  std::vector<Blob<Dtype>*> net_input_blobs_;
  std::vector<Blob<Dtype>*> net_output_blobs_;
  std::vector<std::shared_ptr<Blob<Dtype>>> params_;
  std::vector<Blob<Dtype>*> learnable_params_;
  // For each entry of params_, its index in learnable_params_.
  std::vector<int> learnable_param_ids_;
  std::vector<float> params_lr_;
  std::vector<bool> has_params_lr_;
  std::vector<float> params_weight_decay_;
  std::vector<bool> has_params_decay_;
  bool debug_info_ = false;
  bool log_ = true;

  DISABLE_COPY_AND_ASSIGN(Net);
};

}  // namespace crema

#endif  // CREMA_NET_HPP_
