// Data-parallel training: N solvers train one model, each on its own slice
// of the data. The main solver runs in the calling thread, every other one in
// its own InternalThread worker with its own Context (rank, device, seed) and
// its own Net; shareable layers are built once by the main solver's net. After each
// backward pass the solvers average their gradients through a gradient
// transport (src/crema/transport/: host memory, NCCL between GPUs, MPI
// between processes), then each applies the same update, so the weights stay
// identical everywhere. With MPI (CREMA_MPI builds run under mpirun), each
// process runs this, and the per-process sums are added across processes.
#ifndef CREMA_PARALLEL_HPP_
#define CREMA_PARALLEL_HPP_

#include <boost/thread/condition_variable.hpp>
#include <boost/thread/mutex.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crema/internal_thread.hpp"
#include "crema/solver.hpp"

namespace crema {

// A reusable barrier for a fixed group of threads that can be torn down:
// Abort() wakes every waiter and makes every later Wait() return false.
class AbortableBarrier {
 public:
  explicit AbortableBarrier(int parties) : parties_(parties) {}
  // True when all parties arrived; false once aborted. On a boost thread the
  // wait is an interruption point.
  bool Wait();
  void Abort();
  bool aborted() const;

 private:
  const int parties_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
  mutable boost::mutex mutex_;
  boost::condition_variable all_arrived_;
  DISABLE_COPY_AND_ASSIGN(AbortableBarrier);
};

// Averages one contiguous buffer per local solver: `count` gradient values
// plus one slot that carries rank 0's action (NONE 0, STOP 1,
// SNAPSHOT 2; the other solvers put 0), so every solver learns at the same
// iteration what rank 0 decided. CPU: reduce-scatter (local solver r sums
// chunk r over the solvers in rank order, so the result never depends on
// timing), then, with MPI, one sum across processes, then every solver copies
// the average back. GPU builds with NCCL reduce device buffers with NCCL.
template <typename Dtype>
class GradientTransport;  // src/crema/transport/gradient_transport.hpp

template <typename Dtype>
class ParallelTrainer {
 public:
  // Makes the calling thread rank first_rank of total_solvers and builds its
  // solver, the main solver. local_solvers threads run in this
  // process; devices: one GPU id per local solver in GPU mode, else empty.
  // The thread budget is divided between the local solvers.
  ParallelTrainer(const SolverParameter& param, int local_solvers,
                  const std::vector<int>& devices = {});
  ~ParallelTrainer();

  // The solver of the calling thread (local index 0): the workers start from
  // its state and take its training net's shareable layers.
  Solver<Dtype>* main_solver() { return main_.get(); }
  // What rank 0 polls once per iteration (signals); the action is shared
  // with every solver through the gradient averaging.
  void SetActionFunction(std::function<SolverAction()> action) { action_ = std::move(action); }
  // Restores the main solver from resume_file (if any), gives every solver
  // its state, trains all to max_iter, and stops every worker. An error in
  // any solver stops the others and is rethrown here.
  void Run(const std::string& resume_file = "");

  // The worker solvers, after Run (for tests; null where a worker failed).
  std::vector<Solver<Dtype>*> worker_solvers() const;

 private:
  class Worker;

  // Averages this solver's gradients with the others'; returns rank 0's
  // action, or STOP when training is being torn down.
  SolverAction Average(Solver<Dtype>* solver, int local_index);
  void StopWorkers();

  const SolverParameter param_;
  const int local_solvers_;
  const std::vector<int> devices_;
  const int saved_budget_;
  int first_rank_ = 0;
  std::unique_ptr<Solver<Dtype>> main_;
  std::unique_ptr<GradientTransport<Dtype>> transport_;
  std::unique_ptr<AbortableBarrier> start_barrier_;
  // Reached by every solver after its last iteration, so that a run that ends
  // normally joins workers that have finished, never interrupts them.
  std::unique_ptr<AbortableBarrier> end_barrier_;
  std::vector<std::unique_ptr<Worker>> workers_;
  boost::mutex copy_mutex_;  // workers copy the main solver's state one at a time
  std::function<SolverAction()> action_;
  DISABLE_COPY_AND_ASSIGN(ParallelTrainer);
};

// MPI (CREMA_MPI builds): this process's rank and the number of processes
// (0 and 1 without MPI or outside mpirun). Initialised on first use
// (src/crema/transport/processes_mpi.cpp, or one_process.cpp).
int ProcessRank();
int ProcessCount();
// Finalises MPI if it was initialised (call once, at exit).
void FinalizeProcesses();
// Tears every process down after an error (MPI_Abort); no-op without MPI.
void AbortProcesses(int status);

}  // namespace crema

#endif  // CREMA_PARALLEL_HPP_
