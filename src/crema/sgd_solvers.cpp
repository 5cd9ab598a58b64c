#include "crema/sgd_solvers.hpp"

#include <algorithm>
#include <cmath>

#include "crema/sgd_update_gpu.hpp"
#include "crema/util/io.hpp"
#include "crema/util/upgrade_proto.hpp"

namespace crema {

// In GPU mode the net keeps parameters and gradients on the device, so each
// step of the update runs there too, history included: nothing goes through
// host memory. A CPU-only build has no device bodies to call.
#ifdef CREMA_CUDA
#define CREMA_SOLVER_GPU(call) call
#else
#define CREMA_SOLVER_GPU(call) NO_GPU
#endif

template <typename Dtype>
SGDSolver<Dtype>::SGDSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from)
    : Solver<Dtype>(param, share_layers_from) {
  AddHistorySet();
}

template <typename Dtype>
void SGDSolver<Dtype>::AddHistorySet() {
  for (Blob<Dtype>* param : this->net_->learnable_params()) {
    history_.emplace_back(new Blob<Dtype>(param->shape()));
  }
}

template <typename Dtype>
void SGDSolver<Dtype>::ApplyUpdate() {
  const Dtype rate = this->GetLearningRate();
  if (this->param_.display() && this->iter_ % this->param_.display() == 0 &&
      Context::is_rank_zero()) {
    LOG(INFO) << "Iteration " << this->iter_ << ", lr = " << rate;
  }
  ClipGradients();
  const int num_params = static_cast<int>(this->net_->learnable_params().size());
  const bool decoupled = decoupled_weight_decay();
  for (int i = 0; i < num_params; ++i) {
    Normalize(i);
    if (!decoupled) Regularize(i);
    ComputeUpdateValue(i, rate);
    if (decoupled) DecayDecoupled(i, rate);
  }
  this->net_->Update();
}

// iter_size passes accumulated their gradients: average them. scale_diff
// (like sumsq_diff in ClipGradients) works where the gradient's newest copy
// is, so in GPU mode it stays on the device.
template <typename Dtype>
void SGDSolver<Dtype>::Normalize(int param_id) {
  if (this->param_.iter_size() == 1) return;
  this->net_->learnable_params()[param_id]->scale_diff(Dtype(1) / this->param_.iter_size());
}

template <typename Dtype>
void SGDSolver<Dtype>::Regularize(int param_id) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const Dtype decay = this->param_.weight_decay() * this->net_->params_weight_decay()[param_id];
  if (decay == 0) return;
  const std::string& type = this->param_.regularization_type();
  const int n = param->count();
  const bool on_gpu = Context::mode() == Context::GPU;
  if (type == "L2" && on_gpu) {
    CREMA_SOLVER_GPU(gpu_axpy(n, decay, param->gpu_data(), param->mutable_gpu_diff()));
  } else if (type == "L2") {
    cpu_axpy(n, decay, param->cpu_data(), param->mutable_cpu_diff());
  } else if (type == "L1" && on_gpu) {
    CREMA_SOLVER_GPU(l1_regularize_gpu(n, decay, param->gpu_data(), param->mutable_gpu_diff()));
  } else if (type == "L1") {
    const Dtype* data = param->cpu_data();
    Dtype* diff = param->mutable_cpu_diff();
    for (int i = 0; i < n; ++i) diff[i] += decay * ((data[i] > 0) - (data[i] < 0));
  } else {
    CREMA_FAIL("solver: unknown regularization_type '" << type << "' (L1 or L2)");
  }
}

// After the rule turned the gradient into the step: the step grows by the
// decay, so that net_->Update() subtracts both.
template <typename Dtype>
void SGDSolver<Dtype>::DecayDecoupled(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const Dtype decay = rate * this->net_->params_lr()[param_id] * this->param_.weight_decay() *
                      this->net_->params_weight_decay()[param_id];
  if (decay == 0) return;
  if (Context::mode() == Context::GPU) {
    CREMA_SOLVER_GPU(gpu_axpy(param->count(), decay, param->gpu_data(), param->mutable_gpu_diff()));
  } else {
    cpu_axpy(param->count(), decay, param->cpu_data(), param->mutable_cpu_diff());
  }
}

template <typename Dtype>
void SGDSolver<Dtype>::RequireL2ForDecoupledDecay() const {
  CREMA_REQUIRE(this->param_.regularization_type() == "L2",
                "solver: type " << type() << " decays the weights in proportion to themselves "
                                << "(L2); regularization_type "
                                << this->param_.regularization_type() << " would need SGD or Adam");
}

template <typename Dtype>
void SGDSolver<Dtype>::ClipGradients() {
  const Dtype clip = this->param_.clip_gradients();
  if (clip < 0) return;
  Dtype sumsq = 0;
  for (Blob<Dtype>* param : this->net_->learnable_params()) sumsq += param->sumsq_diff();
  const Dtype norm = std::sqrt(sumsq);
  if (norm > clip) {
    const Dtype factor = clip / norm;
    LOG(INFO) << "Gradient clipping: scaling down gradients (L2 norm " << norm << " > " << clip
              << ") by scale factor " << factor;
    for (Blob<Dtype>* param : this->net_->learnable_params()) param->scale_diff(factor);
  }
}

// The rate of one parameter blob: rate * lr_mult, or the forks' layer-wise
// rates, which replace lr_mult by a trust ratio from the blob's norms (a
// frozen blob, lr_mult 0, stays frozen). The gradient's norm is taken after
// the weight decay was added to it, as both forks' CPU bodies do.
//   Intel's local_lr_auto (LARS): local_gw_ratio |w| / (|g| + weight_decay |w|)
//   NVCaffe's larc: larc_eta |w| / |g|, times the rate (larc_policy "scale")
//                   or in place of it where smaller ("clip")
// A blob whose weights or gradient are all zero keeps ratio 1.
template <typename Dtype>
Dtype SGDSolver<Dtype>::LocalRate(int param_id, Dtype rate) const {
  const Dtype lr_mult = this->net_->params_lr()[param_id];
  const SolverParameter& p = this->param_;
  if ((!p.local_lr_auto() && !p.larc()) || lr_mult <= 0) return rate * lr_mult;
  const Blob<Dtype>& param = *this->net_->learnable_params()[param_id];
  const double weights = std::sqrt(static_cast<double>(param.sumsq_data()));
  const double gradient = std::sqrt(static_cast<double>(param.sumsq_diff()));
  if (!(weights > 0 && gradient > 0)) return rate;
  if (p.local_lr_auto()) {
    return rate * static_cast<Dtype>(p.local_gw_ratio() * weights /
                                     (gradient + p.weight_decay() * weights));
  }
  const Dtype trust = static_cast<Dtype>(p.larc_eta() * weights / gradient);
  return p.larc_policy() == "clip" ? std::min(rate, trust) : rate * trust;
}

// v = momentum * v + rate * g; step = v.
template <typename Dtype>
void SGDSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const Dtype local_rate = LocalRate(param_id, rate);
  const int n = param->count();
  const Dtype momentum = this->param_.momentum();
  if (Context::mode() == Context::GPU) {
    CREMA_SOLVER_GPU(sgd_update_gpu(n, param->mutable_gpu_diff(),
                                    history_[param_id]->mutable_gpu_data(), momentum, local_rate));
    return;
  }
  Dtype* history = history_[param_id]->mutable_cpu_data();
  cpu_axpby(n, local_rate, param->cpu_diff(), momentum, history);
  cpu_copy(n, history, param->mutable_cpu_diff());
}

template <typename Dtype>
void SGDSolver<Dtype>::SnapshotSolverState(SolverState* state) {
  for (const auto& blob : history_) blob->ToProto(state->add_history());
}

template <typename Dtype>
void SGDSolver<Dtype>::RestoreSolverState(const SolverState& state) {
  CREMA_REQUIRE(state.history_size() == static_cast<int>(history_.size()),
                "solver state holds " << state.history_size() << " history blobs, this "
                                      << this->type() << " solver of this net needs "
                                      << history_.size());
  for (size_t i = 0; i < history_.size(); ++i) {
    history_[i]->FromProto(state.history(static_cast<int>(i)), false);
  }
}

template <typename Dtype>
void SGDSolver<Dtype>::CopyHistoryFrom(const Solver<Dtype>& other) {
  const auto& theirs = dynamic_cast<const SGDSolver<Dtype>&>(other).history_;
  // Invariant: both solvers were built from one SolverParameter for one net.
  CHECK_EQ(theirs.size(), history_.size());
  for (size_t i = 0; i < history_.size(); ++i) history_[i]->CopyFrom(*theirs[i]);
}

// v' = momentum * v + rate * g; step = (1 + momentum) * v' - momentum * v.
template <typename Dtype>
void NesterovSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const Dtype local_rate = this->LocalRate(param_id, rate);
  const Dtype momentum = this->param_.momentum();
  const int n = param->count();
  if (Context::mode() == Context::GPU) {
    CREMA_SOLVER_GPU(nesterov_update_gpu(n, param->mutable_gpu_diff(),
                                         this->history_[param_id]->mutable_gpu_data(), momentum,
                                         local_rate));
    return;
  }
  Dtype* history = this->history_[param_id]->mutable_cpu_data();
  Dtype* diff = param->mutable_cpu_diff();
  for (int i = 0; i < n; ++i) {
    const Dtype previous = history[i];
    history[i] = momentum * history[i] + local_rate * diff[i];
    diff[i] = (1 + momentum) * history[i] - momentum * previous;
  }
}

template <typename Dtype>
AdaGradSolver<Dtype>::AdaGradSolver(const SolverParameter& param,
                                    const Net<Dtype>* share_layers_from)
    : SGDSolver<Dtype>(param, share_layers_from) {
  CREMA_REQUIRE(this->param_.momentum() == 0, "AdaGrad takes no momentum; remove it");
}

// h += g^2; step = rate * g / (sqrt(h) + delta).
template <typename Dtype>
void AdaGradSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
  const Dtype delta = this->param_.delta();
  if (Context::mode() == Context::GPU) {
    CREMA_SOLVER_GPU(adagrad_update_gpu(param->count(), param->mutable_gpu_diff(),
                                        this->history_[param_id]->mutable_gpu_data(), delta,
                                        local_rate));
    return;
  }
  Dtype* history = this->history_[param_id]->mutable_cpu_data();
  Dtype* diff = param->mutable_cpu_diff();
  for (int i = 0; i < param->count(); ++i) {
    history[i] += diff[i] * diff[i];
    diff[i] = local_rate * diff[i] / (std::sqrt(history[i]) + delta);
  }
}

template <typename Dtype>
RMSPropSolver<Dtype>::RMSPropSolver(const SolverParameter& param,
                                    const Net<Dtype>* share_layers_from)
    : SGDSolver<Dtype>(param, share_layers_from) {
  CREMA_REQUIRE(this->param_.momentum() == 0, "RMSProp takes no momentum; use rms_decay");
  CREMA_REQUIRE(this->param_.rms_decay() >= 0 && this->param_.rms_decay() < 1,
                "RMSProp: rms_decay must be in [0, 1)");
}

// h = d * h + (1 - d) * g^2; step = rate * g / (sqrt(h) + delta).
template <typename Dtype>
void RMSPropSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
  const Dtype delta = this->param_.delta(), decay = this->param_.rms_decay();
  if (Context::mode() == Context::GPU) {
    CREMA_SOLVER_GPU(rmsprop_update_gpu(param->count(), param->mutable_gpu_diff(),
                                        this->history_[param_id]->mutable_gpu_data(), decay, delta,
                                        local_rate));
    return;
  }
  Dtype* history = this->history_[param_id]->mutable_cpu_data();
  Dtype* diff = param->mutable_cpu_diff();
  for (int i = 0; i < param->count(); ++i) {
    history[i] = decay * history[i] + (1 - decay) * diff[i] * diff[i];
    diff[i] = local_rate * diff[i] / (std::sqrt(history[i]) + delta);
  }
}

template <typename Dtype>
AdaDeltaSolver<Dtype>::AdaDeltaSolver(const SolverParameter& param,
                                      const Net<Dtype>* share_layers_from)
    : SGDSolver<Dtype>(param, share_layers_from) {
  this->AddHistorySet();  // the running mean of squared updates
}

// h = m * h + (1 - m) * g^2; u = g * sqrt(s + delta) / sqrt(h + delta);
// s = m * s + (1 - m) * u^2; step = rate * u.
template <typename Dtype>
void AdaDeltaSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const size_t num_params = this->net_->learnable_params().size();
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
  const Dtype delta = this->param_.delta(), momentum = this->param_.momentum();
  if (Context::mode() == Context::GPU) {
    CREMA_SOLVER_GPU(adadelta_update_gpu(
        param->count(), param->mutable_gpu_diff(), this->history_[param_id]->mutable_gpu_data(),
        this->history_[num_params + param_id]->mutable_gpu_data(), momentum, delta, local_rate));
    return;
  }
  Dtype* gradients = this->history_[param_id]->mutable_cpu_data();
  Dtype* updates = this->history_[num_params + param_id]->mutable_cpu_data();
  Dtype* diff = param->mutable_cpu_diff();
  for (int i = 0; i < param->count(); ++i) {
    gradients[i] = momentum * gradients[i] + (1 - momentum) * diff[i] * diff[i];
    const Dtype update = diff[i] * std::sqrt(updates[i] + delta) / std::sqrt(gradients[i] + delta);
    updates[i] = momentum * updates[i] + (1 - momentum) * update * update;
    diff[i] = local_rate * update;
  }
}

template <typename Dtype>
AdamSolver<Dtype>::AdamSolver(const SolverParameter& param, const Net<Dtype>* share_layers_from)
    : SGDSolver<Dtype>(param, share_layers_from) {
  this->AddHistorySet();  // the second moment
}

// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// step = rate * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps), t = iter + 1.
template <typename Dtype>
void AdamSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const size_t num_params = this->net_->learnable_params().size();
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
  const Dtype beta1 = this->param_.momentum(), beta2 = this->param_.momentum2();
  const Dtype eps = this->param_.delta();
  const int t = this->iter_ + 1;
  const Dtype correction =
      std::sqrt(Dtype(1) - std::pow(beta2, Dtype(t))) / (Dtype(1) - std::pow(beta1, Dtype(t)));
  if (Context::mode() == Context::GPU) {
    CREMA_SOLVER_GPU(adam_update_gpu(param->count(), param->mutable_gpu_diff(),
                                     this->history_[param_id]->mutable_gpu_data(),
                                     this->history_[num_params + param_id]->mutable_gpu_data(),
                                     beta1, beta2, eps, local_rate * correction));
    return;
  }
  Dtype* m = this->history_[param_id]->mutable_cpu_data();
  Dtype* v = this->history_[num_params + param_id]->mutable_cpu_data();
  Dtype* diff = param->mutable_cpu_diff();
  for (int i = 0; i < param->count(); ++i) {
    m[i] = beta1 * m[i] + (1 - beta1) * diff[i];
    v[i] = beta2 * v[i] + (1 - beta2) * diff[i] * diff[i];
    diff[i] = local_rate * correction * m[i] / (std::sqrt(v[i]) + eps);
  }
}

template <typename Dtype>
std::unique_ptr<Solver<Dtype>> CreateSolver(const SolverParameter& given,
                                            const Net<Dtype>* share_layers_from) {
  const SolverParameter param = SolverTypeUpgraded(given);
  const std::string& type = param.type();
  if (type == "SGD")
    return std::unique_ptr<Solver<Dtype>>(new SGDSolver<Dtype>(param, share_layers_from));
  if (type == "Nesterov")
    return std::unique_ptr<Solver<Dtype>>(new NesterovSolver<Dtype>(param, share_layers_from));
  if (type == "AdaGrad")
    return std::unique_ptr<Solver<Dtype>>(new AdaGradSolver<Dtype>(param, share_layers_from));
  if (type == "RMSProp")
    return std::unique_ptr<Solver<Dtype>>(new RMSPropSolver<Dtype>(param, share_layers_from));
  if (type == "AdaDelta")
    return std::unique_ptr<Solver<Dtype>>(new AdaDeltaSolver<Dtype>(param, share_layers_from));
  if (type == "Adam")
    return std::unique_ptr<Solver<Dtype>>(new AdamSolver<Dtype>(param, share_layers_from));
  if (type == "SGDW")
    return std::unique_ptr<Solver<Dtype>>(new SGDWSolver<Dtype>(param, share_layers_from));
  if (type == "AdamW")
    return std::unique_ptr<Solver<Dtype>>(new AdamWSolver<Dtype>(param, share_layers_from));
  CREMA_FAIL("solver: unknown type '"
             << type << "' (SGD, Nesterov, AdaGrad, RMSProp, AdaDelta, Adam, SGDW, AdamW)");
}

INSTANTIATE_CLASS(SGDSolver);
INSTANTIATE_CLASS(NesterovSolver);
INSTANTIATE_CLASS(AdaGradSolver);
INSTANTIATE_CLASS(RMSPropSolver);
INSTANTIATE_CLASS(AdaDeltaSolver);
INSTANTIATE_CLASS(AdamSolver);
INSTANTIATE_CLASS(SGDWSolver);
INSTANTIATE_CLASS(AdamWSolver);
template std::unique_ptr<Solver<float>> CreateSolver<float>(const SolverParameter&,
                                                            const Net<float>*);
template std::unique_ptr<Solver<double>> CreateSolver<double>(const SolverParameter&,
                                                              const Net<double>*);

#undef CREMA_SOLVER_GPU

}  // namespace crema
