// Layer: the unit of computation of a net. A layer reads its bottom blobs and
// writes its top blobs (Forward), and propagates gradients from its tops to
// its bottoms and its parameters (Backward). Each layer type has a CPU body
// and, optionally, a GPU body; the GPU body defaults to the CPU one.
#ifndef CREMA_LAYER_HPP_
#define CREMA_LAYER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "crema/blob.hpp"
#include "crema/common.hpp"
#include "crema/layer_factory.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/math_functions.hpp"

namespace crema {

class Turnstile;

// The key of a data layer's position in a solver state (and of a Data layer's
// shared reader): its name, its source and its phase ("data:train.txt:TRAIN").
std::string DataSourceKey(const LayerParameter& param, const std::string& source);

// Throws a user error whose message names the layer and its type:
//   CREMA_LAYER_REQUIRE(stride > 0, "stride must be positive, got " << stride);
#define CREMA_LAYER_REQUIRE(condition, message)                                         \
  CREMA_REQUIRE(condition, "layer '" << this->layer_param_.name() << "' (" << this->type() \
                                     << "): " << message)

// Explicit instantiation of a layer's GPU bodies, at the bottom of its .cu file.
#define INSTANTIATE_LAYER_GPU_FORWARD(classname)                                           \
  template void classname<float>::Forward_gpu(const std::vector<Blob<float>*>& bottom,    \
                                              const std::vector<Blob<float>*>& top);      \
  template void classname<double>::Forward_gpu(const std::vector<Blob<double>*>& bottom,  \
                                               const std::vector<Blob<double>*>& top)

#define INSTANTIATE_LAYER_GPU_BACKWARD(classname)                                         \
  template void classname<float>::Backward_gpu(const std::vector<Blob<float>*>& top,      \
                                               const std::vector<bool>& propagate_down,   \
                                               const std::vector<Blob<float>*>& bottom);  \
  template void classname<double>::Backward_gpu(const std::vector<Blob<double>*>& top,    \
                                                const std::vector<bool>& propagate_down,  \
                                                const std::vector<Blob<double>*>& bottom)

#define INSTANTIATE_LAYER_GPU_FUNCS(classname) \
  INSTANTIATE_LAYER_GPU_FORWARD(classname);    \
  INSTANTIATE_LAYER_GPU_BACKWARD(classname)

template <typename Dtype>
class Layer {
 public:
  // Takes the layer's configuration and, if it carries blobs (trained
  // weights), copies them in.
  explicit Layer(const LayerParameter& param);
  virtual ~Layer();

  // Checks the blob counts, runs the layer's own set-up, shapes the tops and
  // sets the loss weights. Wrong bottoms or parameters are user errors (Error)
  // naming the layer.
  void SetUp(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top);

  // One-time set-up specific to the layer type: read parameters, create and
  // fill learnable blobs.
  virtual void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                          const std::vector<Blob<Dtype>*>& top) {}
  // Shapes the tops (and internal buffers) from the bottoms' shapes.
  virtual void Reshape(const std::vector<Blob<Dtype>*>& bottom,
                       const std::vector<Blob<Dtype>*>& top) = 0;

  // Computes the tops from the bottoms and returns the weighted loss.
  Dtype Forward(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top);
  // Computes the bottoms' (where propagate_down) and the parameters' gradients.
  void Backward(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                const std::vector<Blob<Dtype>*>& bottom);

  std::vector<std::shared_ptr<Blob<Dtype>>>& blobs() { return blobs_; }
  const LayerParameter& layer_param() const { return layer_param_; }
  // Writes the configuration and the learnable blobs.
  virtual void ToProto(LayerParameter* param, bool write_diff = false);

  Dtype loss(int top_index) const {
    return loss_.size() > static_cast<size_t>(top_index) ? loss_[top_index] : Dtype(0);
  }
  void set_loss(int top_index, Dtype value);

  virtual const char* type() const { return ""; }

  // Blob counts the layer accepts; -1 means "no constraint".
  virtual int ExactNumBottomBlobs() const { return -1; }
  virtual int MinBottomBlobs() const { return -1; }
  virtual int MaxBottomBlobs() const { return -1; }
  virtual int ExactNumTopBlobs() const { return -1; }
  virtual int MinTopBlobs() const { return -1; }
  virtual int MaxTopBlobs() const { return -1; }
  virtual bool EqualNumBottomTopBlobs() const { return false; }
  // True when the net should create the minimum number of tops the prototxt
  // did not name (e.g. a loss layer's top).
  virtual bool AutoTopBlobs() const { return false; }
  // Whether force_backward may ask for the gradient of this bottom (labels,
  // say, have none).
  virtual bool AllowForceBackward(int bottom_index) const { return true; }
  // True for a layer whose tops are the net's inputs, filled by its caller
  // (Input).
  virtual bool ProvidesNetInputs() const { return false; }

  // Resume state: how far a layer that reads data has read. A snapshot asks
  // every layer to append its position to the solver state; a net rebuilt to
  // resume hands that state to every layer before SetUp, and a data layer
  // takes back its own entry, so the resumed run serves next what the
  // uninterrupted run would have. Layers without such a position do nothing.
  virtual void AppendResumeState(SolverState* state) const {}
  virtual void RestoreResumeState(const SolverState& state) {}

  // The end of a run: a layer that writes a file over the run (HDF5Output)
  // writes it now; an error names the file. Layers without one do nothing.
  virtual void Finish() {}

  bool param_propagate_down(int param_id) const {
    return param_propagate_down_.size() > static_cast<size_t>(param_id) &&
           param_propagate_down_[param_id];
  }
  void set_param_propagate_down(int param_id, bool value);

  // A layer that cannot be split per solver (it holds the one copy of some
  // data) returns true; data-parallel training then builds it once and lets
  // the solvers pass through its Forward one at a time, in rank order.
  virtual bool ShareInParallel() const { return false; }
  bool IsShared() const { return static_cast<bool>(forward_turn_); }
  // Shares the layer between the `solvers` solver threads of this process
  // (solvers <= 1: not shared).
  void SetShared(int solvers);

 protected:
  virtual void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                           const std::vector<Blob<Dtype>*>& top) = 0;
  virtual void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                           const std::vector<Blob<Dtype>*>& top) {
    Forward_cpu(bottom, top);
  }
  virtual void Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                            const std::vector<bool>& propagate_down,
                            const std::vector<Blob<Dtype>*>& bottom) = 0;
  virtual void Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                            const std::vector<bool>& propagate_down,
                            const std::vector<Blob<Dtype>*>& bottom) {
    Backward_cpu(top, propagate_down, bottom);
  }

  virtual void CheckBlobCounts(const std::vector<Blob<Dtype>*>& bottom,
                               const std::vector<Blob<Dtype>*>& top);
  // Reads each top's loss weight into its diff, so Backward starts from it.
  void SetLossWeights(const std::vector<Blob<Dtype>*>& top);

  LayerParameter layer_param_;
  Phase phase_;
  std::vector<std::shared_ptr<Blob<Dtype>>> blobs_;
  std::vector<bool> param_propagate_down_;
  // Each top's weight in the objective (0 for non-loss tops).
  std::vector<Dtype> loss_;

 private:
  // Orders the solver threads through Forward when the layer is shared.
  std::unique_ptr<Turnstile> forward_turn_;

  DISABLE_COPY_AND_ASSIGN(Layer);
};

}  // namespace crema

#endif  // CREMA_LAYER_HPP_
