// How the solvers of a data-parallel run average their gradients: one
// interface (GradientTransport), three implementations in files of their
// own, each compiled only where its library is (CMakeLists.txt):
// - host_transport.cpp: the local solvers' threads sum through host memory
//   (a reduce-scatter and an all-gather between barriers, in rank order, so
//   the sum is the same bits every run) and, with more than one process,
//   add the process sums (processes.hpp: MPI, or one process);
// - nccl_transport.cpp (NCCL builds): one communicator per local GPU, or one
//   per process for a group the Python API forms (NcclGroup); the gradients
//   never leave the devices.
// ParallelTrainer asks MakeGradientTransport for one and knows none of them.
#ifndef CREMA_TRANSPORT_GRADIENT_TRANSPORT_HPP_
#define CREMA_TRANSPORT_GRADIENT_TRANSPORT_HPP_

#include <cstddef>
#include <memory>
#include <vector>

#include "crema/blob.hpp"

namespace crema {

template <typename Dtype>
class GradientTransport {
 public:
  virtual ~GradientTransport() = default;
  // Called by every local solver (local_index in [0, local solvers)), on
  // its own thread, once per iteration, with its learnable parameters in
  // the same order in every solver: their diffs become the average over
  // every solver of every process. *code rides along: it becomes the sum of
  // every solver's. Returns false once aborted (the diffs are then as the
  // pass left them, or partly averaged).
  virtual bool Average(int local_index, const std::vector<Blob<Dtype>*>& params, Dtype* code) = 0;
  // Wakes every solver waiting inside Average; later calls return false.
  virtual void Abort() = 0;
};

// Calls visit(blob, at) for each of params, `at` the place of its first
// value in a buffer that packs their diffs one after the other; returns
// the values in all.
template <typename Dtype, typename Visit>
size_t ForEachPacked(const std::vector<Blob<Dtype>*>& params, Visit visit) {
  size_t at = 0;
  for (Blob<Dtype>* blob : params) {
    visit(*blob, at);
    at += blob->count();
  }
  return at;
}

// The transport for `local_solvers` solver threads of `total_solvers` in
// all (over every process), with `count` gradient values each: NCCL where
// `devices` gives the local GPUs (one per solver, more than one) and the
// build has NCCL, else host memory.
template <typename Dtype>
std::unique_ptr<GradientTransport<Dtype>> MakeGradientTransport(int local_solvers,
                                                                int total_solvers, size_t count,
                                                                const std::vector<int>& devices);

// NCCL between the local GPUs `devices` (one solver each); null in builds
// without NCCL (nccl_transport.cpp, or no_nccl.cpp).
template <typename Dtype>
std::unique_ptr<GradientTransport<Dtype>> MakeLocalNcclTransport(int total_solvers, size_t count,
                                                                 const std::vector<int>& devices);

}  // namespace crema

#endif  // CREMA_TRANSPORT_GRADIENT_TRANSPORT_HPP_
