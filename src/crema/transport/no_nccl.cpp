// Builds without NCCL: the local GPUs average through host memory, and the
// Python API's NCCL group cannot be formed.
#include "crema/nccl_group.hpp"
#include "crema/transport/gradient_transport.hpp"

namespace crema {

template <typename Dtype>
std::unique_ptr<GradientTransport<Dtype>> MakeLocalNcclTransport(int, size_t,
                                                                 const std::vector<int>&) {
  return nullptr;
}

template std::unique_ptr<GradientTransport<float>> MakeLocalNcclTransport<float>(
    int, size_t, const std::vector<int>&);
template std::unique_ptr<GradientTransport<double>> MakeLocalNcclTransport<double>(
    int, size_t, const std::vector<int>&);

namespace {
const char kNoNccl[] =
    "this Crema was built without NCCL (caffe.has_nccl() is False), so caffe.NCCL cannot "
    "join processes: build with CUDA and NCCL (CREMA_CUDA=ON, NCCL beside the toolkit), or "
    "train one model on several devices with `crema train --gpu=0,1` or `--solver_count=N`";
}  // namespace

template <typename Dtype>
bool NcclGroup<Dtype>::Available() {
  return false;
}

template <typename Dtype>
std::string NcclGroup<Dtype>::NewUid() {
  throw Error(kNoNccl);
}

template <typename Dtype>
NcclGroup<Dtype>::NcclGroup(std::shared_ptr<Solver<Dtype>> solver, const std::string&)
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
void NcclGroup<Dtype>::AverageGradients() {
  throw Error(kNoNccl);
}

template <typename Dtype>
void NcclGroup<Dtype>::AttachToSolver() {
  throw Error(kNoNccl);
}

template class NcclGroup<float>;
template class NcclGroup<double>;

}  // namespace crema
