// The processes of a run in a build without MPI (processes.hpp): this one.
#include "crema/parallel.hpp"
#include "crema/transport/processes.hpp"

namespace crema {

int ProcessRank() { return 0; }
int ProcessCount() { return 1; }
void FinalizeProcesses() {}
void AbortProcesses(int) {}

template <typename Dtype>
void SumOverProcesses(Dtype*, size_t) {}
template <typename Dtype>
void BroadcastFromFirstProcess(Dtype*, size_t) {}

template void SumOverProcesses(float*, size_t);
template void SumOverProcesses(double*, size_t);
template void BroadcastFromFirstProcess(float*, size_t);
template void BroadcastFromFirstProcess(double*, size_t);

}  // namespace crema
