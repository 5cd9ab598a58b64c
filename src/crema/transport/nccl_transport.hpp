// The transport over NCCL (gradient_transport.hpp), in builds with NCCL
// only: one communicator per local solver, each on its GPU. Two groups
// use it: the local GPUs of one process, made together (ParallelTrainer),
// and one GPU per process, joined through a unique id (NcclGroup, the
// Python API's). The gradients are packed into a buffer on the device,
// summed there by one all-reduce, scaled and unpacked: they never leave it.
#ifndef CREMA_TRANSPORT_NCCL_TRANSPORT_HPP_
#define CREMA_TRANSPORT_NCCL_TRANSPORT_HPP_

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/parallel.hpp"
#include "crema/transport/gradient_transport.hpp"

namespace crema {

// NCCL's failures come from what the processes were given (an id from
// another group, a rank two processes share, a lost peer): user errors.
void RequireNccl(ncclResult_t result, const char* what);

template <typename Dtype>
class NcclTransport : public GradientTransport<Dtype> {
 public:
  // The local GPUs `devices`, one solver each, of total_solvers in all.
  static std::unique_ptr<NcclTransport> ForLocalDevices(const std::vector<int>& devices,
                                                        int total_solvers, size_t count);
  // This process's place, rank of `size`, in the group of `id` (NCCL's
  // unique id, every process's the same), on this thread's device.
  static std::unique_ptr<NcclTransport> ForGroup(const ncclUniqueId& id, int size, int rank,
                                                 size_t count);
  ~NcclTransport() override;

  bool Average(int local_index, const std::vector<Blob<Dtype>*>& params, Dtype* code) override;
  void Abort() override { barrier_.Abort(); }
  // The first member's data of params into every member's (a group of one
  // solver per process).
  void Broadcast(const std::vector<Blob<Dtype>*>& params);

 private:
  NcclTransport(std::vector<ncclComm_t> comms, std::vector<int> devices, int total_solvers,
                size_t count);
  // Local solver i's buffer (count + 1 values on its device), made by its
  // first call.
  Dtype* Buffer(int i);

  const std::vector<ncclComm_t> comms_;
  const std::vector<int> devices_;
  const int total_solvers_;
  const size_t count_;
  // Every local solver arrives before any enters NCCL: a torn-down run
  // never leaves one waiting inside a collective.
  AbortableBarrier barrier_;
  std::vector<cudaStream_t> streams_;
  // Per solver: marks, on the default stream, the end of the copies that
  // fill its buffer, so that its NCCL stream waits for them.
  std::vector<cudaEvent_t> filled_;
  std::vector<Dtype*> buffers_;
};

}  // namespace crema

#endif  // CREMA_TRANSPORT_NCCL_TRANSPORT_HPP_
