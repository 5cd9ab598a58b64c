// The gradient-descent family: SGD with momentum, Nesterov, AdaGrad,
// RMSProp, AdaDelta and Adam. They share the update pipeline (clip, scale
// for iter_size, weight decay, per-parameter rule, apply) and differ only in
// the per-parameter rule and its history.
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
  void Regularize(int param_id);
  void ClipGradients();
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
  explicit AdaGradSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from = nullptr);
  const char* type() const override { return "AdaGrad"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

template <typename Dtype>
class RMSPropSolver : public SGDSolver<Dtype> {
 public:
  explicit RMSPropSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from = nullptr);
  const char* type() const override { return "RMSProp"; }

 protected:
  void ComputeUpdateValue(int param_id, Dtype rate) override;
};

template <typename Dtype>
class AdaDeltaSolver : public SGDSolver<Dtype> {
 public:
  explicit AdaDeltaSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from = nullptr);
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

// The solver param.type() names (SGD, Nesterov, AdaGrad, RMSProp, AdaDelta,
// Adam); an unknown type is a user error listing the known ones.
// share_layers_from: see Solver.
template <typename Dtype>
std::unique_ptr<Solver<Dtype>> CreateSolver(const SolverParameter& param,
                                            const Net<Dtype>* share_layers_from = nullptr);

}  // namespace crema

#endif  // CREMA_SGD_SOLVERS_HPP_
