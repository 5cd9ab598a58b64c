// The processes of a run in a build with MPI (processes.hpp): every process
// mpirun started, or this one alone outside a launcher.
#include <mpi.h>

#include <cstdlib>

#include "crema/parallel.hpp"
#include "crema/transport/processes.hpp"

namespace crema {

namespace {

// MPI starts only under a launcher (mpirun sets these), so a plain run of a
// CREMA_MPI build neither pays for MPI nor needs its daemons.
bool LaunchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

bool MpiReady() {
  static const bool ready = [] {
    if (!LaunchedByMpi()) return false;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      // Only each process's root thread (the one that called main) calls MPI.
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    }
    return true;
  }();
  return ready;
}

template <typename Dtype>
MPI_Datatype MpiType() {
  return sizeof(Dtype) == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE;
}

}  // namespace

int ProcessRank() {
  int rank = 0;
  if (MpiReady()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int ProcessCount() {
  int size = 1;
  if (MpiReady()) MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void FinalizeProcesses() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

void AbortProcesses(int status) {
  if (ProcessCount() > 1) MPI_Abort(MPI_COMM_WORLD, status);
}

template <typename Dtype>
void SumOverProcesses(Dtype* values, size_t n) {
  if (ProcessCount() == 1) return;
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(n), MpiType<Dtype>(), MPI_SUM,
                MPI_COMM_WORLD);
}

template <typename Dtype>
void BroadcastFromFirstProcess(Dtype* values, size_t n) {
  if (ProcessCount() == 1) return;
  MPI_Bcast(values, static_cast<int>(n), MpiType<Dtype>(), 0, MPI_COMM_WORLD);
}

template void SumOverProcesses(float*, size_t);
template void SumOverProcesses(double*, size_t);
template void BroadcastFromFirstProcess(float*, size_t);
template void BroadcastFromFirstProcess(double*, size_t);

}  // namespace crema
