// NcclGroup in builds with NCCL (the others': transport/no_nccl.cpp).
#include "crema/nccl_group.hpp"

#include <algorithm>
#include <utility>

#include "crema/transport/nccl_transport.hpp"

namespace crema {

namespace {

template <typename Dtype>
void AverageOver(NcclTransport<Dtype>* transport, Solver<Dtype>* solver) {
  Dtype code = 0;  // nothing rides along
  transport->Average(0, solver->net()->learnable_params(), &code);
}

}  // namespace

template <typename Dtype>
bool NcclGroup<Dtype>::Available() {
  return true;
}

template <typename Dtype>
std::string NcclGroup<Dtype>::NewUid() {
  ncclUniqueId id;
  RequireNccl(ncclGetUniqueId(&id), "could not draw a unique id");
  return std::string(id.internal, sizeof(id.internal));
}

template <typename Dtype>
NcclGroup<Dtype>::NcclGroup(std::shared_ptr<Solver<Dtype>> solver, const std::string& uid)
    : solver_(std::move(solver)) {
  CHECK(solver_) << "NcclGroup needs a solver";
  const int count = Context::solver_count();
  const int rank = Context::solver_rank();
  CREMA_REQUIRE(Context::mode() == Context::GPU,
                "NCCL averages gradients on GPUs: set GPU mode (set_mode_gpu) before joining");
  ncclUniqueId id;
  CREMA_REQUIRE(uid.size() == sizeof(id.internal),
                "NCCL group id: " << uid.size() << " bytes, expected the " << sizeof(id.internal)
                                  << " that NCCL.new_uid() returns");
  CREMA_REQUIRE(count >= 1 && rank >= 0 && rank < count,
                "NCCL group: solver rank " << rank << " is outside [0, solver count " << count
                                           << ")");
  std::copy(uid.begin(), uid.end(), id.internal);
  size_t values = 0;
  for (const Blob<Dtype>* param : solver_->net()->learnable_params()) values += param->count();
  transport_ = NcclTransport<Dtype>::ForGroup(id, count, rank, values);
}

template <typename Dtype>
NcclGroup<Dtype>::~NcclGroup() = default;

template <typename Dtype>
void NcclGroup<Dtype>::Broadcast() {
  transport_->Broadcast(solver_->net()->learnable_params());
}

template <typename Dtype>
void NcclGroup<Dtype>::AverageGradients() {
  AverageOver(transport_.get(), solver_.get());
}

template <typename Dtype>
void NcclGroup<Dtype>::AttachToSolver() {
  if (attached_) return;
  attached_ = true;
  std::shared_ptr<NcclTransport<Dtype>> transport = transport_;
  Solver<Dtype>* solver = solver_.get();  // the callback's owner: alive while it runs
  solver_->add_on_gradients_ready([transport, solver] { AverageOver(transport.get(), solver); });
}

template class NcclGroup<float>;
template class NcclGroup<double>;

}  // namespace crema
