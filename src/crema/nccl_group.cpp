#include "crema/nccl_group.hpp"

#include "crema/util/math_functions.hpp"

#ifdef CREMA_NCCL
#include <nccl.h>
#endif

namespace crema {

#ifdef CREMA_NCCL

namespace {

// NCCL's failures here come from what the processes were given (an id from
// another group, a rank two processes share, a lost peer): user errors.
void RequireNccl(ncclResult_t result, const char* what) {
  CREMA_REQUIRE(result == ncclSuccess, "NCCL " << what << ": " << ncclGetErrorString(result));
}

template <typename Dtype>
ncclDataType_t NcclType() {
  return sizeof(Dtype) == sizeof(float) ? ncclFloat : ncclDouble;
}

}  // namespace

template <typename Dtype>
struct NcclGroup<Dtype>::Communicator {
  ncclComm_t comm = nullptr;
  int size = 1;  // processes in the group
  ~Communicator() {
    if (comm) ncclCommDestroy(comm);
  }
};

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
  communicator_ = std::make_shared<Communicator>();
  communicator_->size = count;
  RequireNccl(ncclCommInitRank(&communicator_->comm, count, id, rank), "could not join the group");
}

template <typename Dtype>
NcclGroup<Dtype>::~NcclGroup() = default;

template <typename Dtype>
void NcclGroup<Dtype>::Broadcast() {
  RequireNccl(ncclGroupStart(), "group start");
  for (Blob<Dtype>* param : solver_->net()->learnable_params()) {
    RequireNccl(ncclBcast(param->mutable_gpu_data(), param->count(), NcclType<Dtype>(), 0,
                          communicator_->comm, cudaStreamLegacy),
                "broadcast");
  }
  RequireNccl(ncclGroupEnd(), "broadcast");
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

template <typename Dtype>
void NcclGroup<Dtype>::Average(const Communicator& communicator, Solver<Dtype>* solver) {
  const Dtype scale = Dtype(1) / communicator.size;
  const std::vector<Blob<Dtype>*>& params = solver->net()->learnable_params();
  RequireNccl(ncclGroupStart(), "group start");
  for (Blob<Dtype>* param : params) {
    Dtype* diff = param->mutable_gpu_diff();
    RequireNccl(ncclAllReduce(diff, diff, param->count(), NcclType<Dtype>(), ncclSum,
                              communicator.comm, cudaStreamLegacy),
                "all-reduce");
  }
  RequireNccl(ncclGroupEnd(), "all-reduce");
  for (Blob<Dtype>* param : params) {
    gpu_scal(param->count(), scale, param->mutable_gpu_diff());
  }
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

template <typename Dtype>
void NcclGroup<Dtype>::AverageGradients() {
  Average(*communicator_, solver_.get());
}

template <typename Dtype>
void NcclGroup<Dtype>::AttachToSolver() {
  if (attached_) return;
  attached_ = true;
  std::shared_ptr<const Communicator> communicator = communicator_;
  Solver<Dtype>* solver = solver_.get();  // the callback's owner: alive while it runs
  solver_->add_on_gradients_ready([communicator, solver] { Average(*communicator, solver); });
}

#else  // no NCCL: the group cannot be formed

namespace {
const char kNoNccl[] =
    "this Crema was built without NCCL (caffe.has_nccl() is False), so caffe.NCCL cannot "
    "join processes: build with CUDA and NCCL (CREMA_CUDA=ON, NCCL beside the toolkit), or "
    "train one model on several devices with `crema train --gpu=0,1` or `--solver_count=N`";
}  // namespace

template <typename Dtype>
struct NcclGroup<Dtype>::Communicator {};

template <typename Dtype>
bool NcclGroup<Dtype>::Available() {
  return false;
}

template <typename Dtype>
std::string NcclGroup<Dtype>::NewUid() {
  throw Error(kNoNccl);
}

template <typename Dtype>
NcclGroup<Dtype>::NcclGroup(std::shared_ptr<Solver<Dtype>> solver, const std::string& uid)
    : solver_(std::move(solver)) {
  throw Error(kNoNccl);
}

template <typename Dtype>
NcclGroup<Dtype>::~NcclGroup() = default;

template <typename Dtype>
void NcclGroup<Dtype>::Broadcast() {
  throw Error(kNoNccl);
}

template <typename Dtype>
void NcclGroup<Dtype>::Average(const Communicator&, Solver<Dtype>*) {
  throw Error(kNoNccl);
}

template <typename Dtype>
void NcclGroup<Dtype>::AverageGradients() {
  throw Error(kNoNccl);
}

template <typename Dtype>
void NcclGroup<Dtype>::AttachToSolver() {
  throw Error(kNoNccl);
}

#endif  // CREMA_NCCL

template class NcclGroup<float>;
template class NcclGroup<double>;

}  // namespace crema
