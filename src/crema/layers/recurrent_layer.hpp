// RecurrentLayer: the base of RNN and LSTM. It unrolls the recurrence over the
// T time steps of its input into an internal Net (the subclass describes one
// step in FillUnrolledNet) and runs that net forward and backward.
//
// Bottoms: x [T, N, ...] (time-major), cont [T, N] (0 where a sequence
// starts: the previous state is multiplied by cont, so it is reset),
// optionally x_static [N, ...] (seen at every step) and, with expose_hidden,
// the initial states (each [1, N, num_output]). Tops: the output
// [T, N, num_output] and, with expose_hidden, the final states. Without
// expose_hidden the final states of one forward pass are the initial states
// of the next, so consecutive batches continue their sequences (cont = 1) or
// start new ones (cont = 0); with it, the initial states receive their
// gradient and the final states' tops pass theirs in (BVLC Caffe drops both).
//
// The learnable blobs are the unrolled net's parameters, in the order its
// layers first use them, sharing their memory: a solver updates them and a
// .caffemodel stores them as Caffe does.
#ifndef CREMA_LAYERS_RECURRENT_LAYER_HPP_
#define CREMA_LAYERS_RECURRENT_LAYER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "crema/layer.hpp"
#include "crema/net.hpp"

namespace crema {

template <typename Dtype>
class RecurrentLayer : public Layer<Dtype> {
 public:
  explicit RecurrentLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  int MinBottomBlobs() const override { return 2 + NumExposedStates(); }
  int MaxBottomBlobs() const override { return MinBottomBlobs() + 1; }
  int ExactNumTopBlobs() const override { return 1 + NumExposedStates(); }
  // cont selects which steps continue a sequence; it has no gradient.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 1; }

 protected:
  // Adds the layers of the recurrence to net_param. Already there: the input
  // layer (tops "x", "cont", "x_static" with a static input, and each state's
  // initial value "<state>_0") and the steps of cont, "cont_1".."cont_T".
  // The subclass must produce OutputBlobName() [T, N, num_output] and each
  // state's value after the last step, "<state>_<T>".
  virtual void FillUnrolledNet(NetParameter* net_param) const = 0;
  // The recurrent states, in the order of the exposed bottoms and tops.
  virtual std::vector<std::string> RecurrentStateNames() const = 0;
  virtual std::string OutputBlobName() const = 0;

  // The blob holding a per-step quantity: AtStep("h", 3) is "h_3".
  static std::string AtStep(const std::string& name, int t) {
    return name + "_" + std::to_string(t);
  }
  int num_output() const {
    return static_cast<int>(this->layer_param_.recurrent_param().num_output());
  }
  bool static_input() const { return static_input_; }
  int num_timesteps() const { return num_timesteps_; }

  // Building blocks for FillUnrolledNet.
  static LayerParameter* AddLayer(const std::string& type, const std::string& name,
                                  const std::vector<std::string>& bottoms,
                                  const std::vector<std::string>& tops, NetParameter* net_param);
  // A fully connected layer over the axes from axis on, with the layer's
  // fillers; param_names names the weights and, when there are two, the bias.
  void AddInnerProduct(const std::string& name, const std::string& bottom, const std::string& top,
                       int num_output, int axis, const std::vector<std::string>& param_names,
                       NetParameter* net_param) const;
  // W x + b over all steps at once, sliced into "<projection>_1".."_T", and,
  // with a static input, W_static x_static as "<projection>_static" [1, N, dim].
  void AddInputProjections(const std::string& projection, const std::string& weight_name,
                           const std::string& bias_name, const std::string& static_weight_name,
                           int dim, NetParameter* net_param) const;
  // "<state>_conted_<t-1>" = cont_t * "<state>_<t-1>": the state a step
  // starts from, zero at the start of a sequence.
  static void AddContinuedState(const std::string& state, int t, NetParameter* net_param);
  // Joins "<step_prefix>_1".."_T" along the time axis into top.
  void AddConcatOverTime(const std::string& step_prefix, const std::string& top,
                         NetParameter* net_param) const;

  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  int NumExposedStates() const;
  // Blob counts are checked by the base; these are the shapes.
  void CheckBottomShapes(const std::vector<Blob<Dtype>*>& bottom) const;
  NetParameter UnrolledNetParam(const std::vector<Blob<Dtype>*>& bottom) const;
  void AddInputLayer(const std::vector<Blob<Dtype>*>& bottom, NetParameter* net_param) const;
  // Cuts bottom along the time axis into "<step_prefix>_1".."_T".
  void AddSliceOverTime(const std::string& bottom, const std::string& step_prefix,
                        NetParameter* net_param) const;
  // Builds the unrolled net for the current number of steps.
  void BuildUnrolledNet(const std::vector<Blob<Dtype>*>& bottom);
  // Makes blobs_ the unrolled net's parameters: its own blobs the first
  // time, or (blobs given with the layer, or a rebuild for a new T) the
  // existing blobs_, whose memory the new net then uses.
  void AdoptUnrolledNetParams();
  // Points every parameter of the unrolled net, each step's copy included,
  // at the memory of blobs_ (which a test net sharing a train net's weights
  // may have replaced since).
  void AliasParamsInUnrolledNet();
  // The unrolled layers compute a parameter's gradient only where this
  // layer's param_propagate_down allows.
  void SyncParamPropagateDown();
  // Shapes the unrolled net for the bottoms, makes its inputs use the
  // bottoms' data and the tops use its outputs.
  void AliasInputsAndOutputs(const std::vector<Blob<Dtype>*>& bottom,
                             const std::vector<Blob<Dtype>*>& top);
  // Makes the tops use the memory of the unrolled net's output and final
  // states (their gradients stay put; their data moves as the net runs).
  void AliasOutputs(const std::vector<Blob<Dtype>*>& top);
  // The carried states start at zero for a new number of streams.
  void ResetCarriedStates();

  std::unique_ptr<Net<Dtype>> unrolled_net_;
  bool expose_hidden_ = false;
  bool static_input_ = false;
  int num_timesteps_ = 0;  // T
  int num_streams_ = 0;    // N
  int input_dim_ = 0;      // x's size per step and stream
  int static_dim_ = 0;     // x_static's size per stream
  // The unrolled net's inputs and the final states (blobs it owns).
  Blob<Dtype>* x_input_ = nullptr;
  Blob<Dtype>* cont_input_ = nullptr;
  Blob<Dtype>* x_static_input_ = nullptr;
  Blob<Dtype>* output_ = nullptr;
  std::vector<Blob<Dtype>*> initial_states_;
  std::vector<Blob<Dtype>*> final_states_;
  // For each of the unrolled net's parameters, the index in blobs_ of the
  // blob it shares.
  std::vector<int> param_blob_index_;
  // Without expose_hidden: the final states of the last pass, which the
  // next pass starts from. Kept apart from the unrolled net's initial states
  // because backward still needs those.
  std::vector<std::unique_ptr<Blob<Dtype>>> carried_states_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_RECURRENT_LAYER_HPP_
