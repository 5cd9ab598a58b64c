// One solver's place in a group of processes that train one model together,
// one GPU each, joined through an NCCL unique id (pycaffe's caffe.NCCL).
// Each process sets its Context's solver count and rank (and GPU mode and
// device), builds its solver, then joins the group with the id that one
// process drew (NewUid) and handed to the others. Broadcast gives every
// process rank 0's weights; AverageGradients, called once per iteration when
// the gradients are ready, leaves every process with the mean gradient, so
// the weights stay identical: through the NCCL transport
// (transport/nccl_transport.hpp), one member per process. Builds without
// NCCL refuse both with an Error (transport/no_nccl.cpp).
#ifndef CREMA_NCCL_GROUP_HPP_
#define CREMA_NCCL_GROUP_HPP_

#include <memory>
#include <string>

#include "crema/solver.hpp"

namespace crema {

template <typename Dtype>
class NcclTransport;  // defined in builds with NCCL only

template <typename Dtype>
class NcclGroup {
 public:
  // True in builds with NCCL (CREMA_NCCL).
  static bool Available();
  // A fresh group id (NCCL's unique id: 128 bytes), for every process of
  // one group to pass to the constructor.
  static std::string NewUid();

  // Joins the group of Context::solver_count() processes as rank
  // Context::solver_rank(), on this thread's device; every process of the
  // group must call it (it waits for them). Errors: no NCCL in this build,
  // CPU mode, an id that is not NewUid's, a rank outside [0, count).
  NcclGroup(std::shared_ptr<Solver<Dtype>> solver, const std::string& uid);
  ~NcclGroup();

  // Copies rank 0's learnable weights into every process's solver.
  void Broadcast();
  // Sums the learnable gradients over the group and divides by its size.
  void AverageGradients();
  // Makes the solver average its gradients over the group whenever they are
  // ready (once per iteration, before the update); calling it again changes
  // nothing. The solver's callback shares the transport, so the group
  // object itself may go before the solver does.
  void AttachToSolver();

  const std::shared_ptr<Solver<Dtype>>& solver() const { return solver_; }

 private:
  std::shared_ptr<Solver<Dtype>> solver_;
  std::shared_ptr<NcclTransport<Dtype>> transport_;  // shared with the solver's callback
  bool attached_ = false;
  DISABLE_COPY_AND_ASSIGN(NcclGroup);
};

}  // namespace crema

#endif  // CREMA_NCCL_GROUP_HPP_
