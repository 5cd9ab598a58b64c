// The processes of a run, for the transports and the trainer: under an MPI
// launcher in a build with MPI (processes_mpi.cpp), every process mpirun
// started; else this one alone (one_process.cpp). CMake compiles one of the
// two. ProcessRank, ProcessCount, FinalizeProcesses and AbortProcesses
// (parallel.hpp) are defined there too.
#ifndef CREMA_TRANSPORT_PROCESSES_HPP_
#define CREMA_TRANSPORT_PROCESSES_HPP_

#include <cstddef>

namespace crema {

// Every process calls these together, from its root thread (the one that
// called main), with the same n.
// values becomes the sum of every process's values.
template <typename Dtype>
void SumOverProcesses(Dtype* values, size_t n);
// values becomes the first process's values.
template <typename Dtype>
void BroadcastFromFirstProcess(Dtype* values, size_t n);

}  // namespace crema

#endif  // CREMA_TRANSPORT_PROCESSES_HPP_
