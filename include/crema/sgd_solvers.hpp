// The gradient-descent family: SGD with momentum, Nesterov, AdaGrad,
// RMSProp, AdaDelta and Adam, and SGDW and AdamW, whose weight decay is
// decoupled from the gradient. They share the update pipeline (clip, scale
// for iter_size, weight decay, per-parameter rule, apply) and differ only in
// the per-parameter rule and its history, and in where the decay enters.
#ifndef CREMA_SGD_SOLVERS_HPP_
#define CREMA_SGD_SOLVERS_HPP_

#include <memory>
#include <string>
#include <vector>

#include "crema/solver.hpp"

namespace crema {

template <typename Dtype>
class SGDSolver : public Solver<Dtype> {
 public:
  explicit SGDSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from = nullptr);
  const char* type() const override { return "SGD"; }
  const std::vector<std::shared_ptr<Blob<Dtype>>>& history() const { return history_; }
  void ApplyUpdate() override;

 protected:
  void Normalize(int param_id);
  // Caffe's weight decay: added to the gradient before the update rule.
  void Regularize(int param_id);
  // Decoupled weight decay (SGDW, AdamW): w shrinks by rate * lr_mult *
  // weight_decay * decay_mult * w beside the rule's step, which never sees it.
  void DecayDecoupled(int param_id, Dtype rate);
  // Whether weight decay is decoupled from the gradient (SGDW, AdamW).
  virtual bool decoupled_weight_decay() const { return false; }
  // Decoupled decay is L2's: another regularization_type is an error.
  void RequireL2ForDecoupledDecay() const;
  void ClipGradients();
  // rate * lr_mult, or the layer-wise rate of Intel's local_lr_auto or
  // NVCaffe's larc (SGD and Nesterov).
  Dtype LocalRate(int param_id, Dtype rate) const;
  // Turns param_id's gradient into the step to subtract, updating history.
  virtual void ComputeUpdateValue(int param_id, Dtype rate);
  void SnapshotSolverState(SolverState* state) override;
  void RestoreSolverState(const SolverState& state) override;
  void CopyHistoryFrom(const Solver<Dtype>& other) override;

  // Adds one zeroed history blob per learnable parameter.
  void AddHistorySet();

  // One history blob per learnable parameter; AdaDelta and Adam keep a
  // second set after the first (history_[n + i] for parameter i).
  std::vector<std::shared_ptr<Blob<Dtype>>> history_;
};

template <typename Dtype>
class NesterovSolver : public SGDSolver<Dtype> {
 public:
  explicit NesterovSolver(const SolverParameter& param,
                          const Net<Dtype>* share_layers_from = nullptr)
      : SGDSolver<Dtype>(param, share_layers_from) {}
  const char* type() const override { return "Nesterov"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

template <typename Dtype>
class AdaGradSolver : public SGDSolver<Dtype> {
 public:
  explicit AdaGradSolver(const SolverParameter& param,
                         const Net<Dtype>* share_layers_from = nullptr);
  const char* type() const override { return "AdaGrad"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

template <typename Dtype>
class RMSPropSolver : public SGDSolver<Dtype> {
 public:
  explicit RMSPropSolver(const SolverParameter& param,
                         const Net<Dtype>* share_layers_from = nullptr);
  const char* type() const override { return "RMSProp"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

template <typename Dtype>
class AdaDeltaSolver : public SGDSolver<Dtype> {
 public:
  explicit AdaDeltaSolver(const SolverParameter& param,
                          const Net<Dtype>* share_layers_from = nullptr);
  const char* type() const override { return "AdaDelta"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

template <typename Dtype>
class AdamSolver : public SGDSolver<Dtype> {
 public:
  explicit AdamSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from = nullptr);
  const char* type() const override { return "Adam"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

// SGD with momentum and decoupled weight decay (Loshchilov and Hutter's
// SGDW): v = momentum v + rate g; w -= v + rate * decay * w.
template <typename Dtype>
class SGDWSolver : public SGDSolver<Dtype> {
 public:
  explicit SGDWSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from = nullptr)
      : SGDSolver<Dtype>(param, share_layers_from) {
    this->RequireL2ForDecoupledDecay();
  }
  const char* type() const override { return "SGDW"; }

 protected:
  bool decoupled_weight_decay() const override { return true; }
};

// Adam with decoupled weight decay (AdamW): Adam's step from the gradient
// alone, and w -= rate * decay * w beside it.
template <typename Dtype>
class AdamWSolver : public AdamSolver<Dtype> {
 public:
  explicit AdamWSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from = nullptr)
      : AdamSolver<Dtype>(param, share_layers_from) {
    this->RequireL2ForDecoupledDecay();
  }
  const char* type() const override { return "AdamW"; }

 protected:
  bool decoupled_weight_decay() const override { return true; }
};

// The solver param.type() names (SGD, Nesterov, AdaGrad, RMSProp, AdaDelta,
// Adam, SGDW, AdamW); an unknown type is a user error listing the known ones.
// share_layers_from: see Solver.
template <typename Dtype>
std::unique_ptr<Solver<Dtype>> CreateSolver(const SolverParameter& param,
                                            const Net<Dtype>* share_layers_from = nullptr);

}  // namespace crema

#endif  // CREMA_SGD_SOLVERS_HPP_
