#include "crema/parallel.hpp"

#include <cmath>
#include <cstdlib>

#include "crema/sgd_solvers.hpp"
#include "crema/util/math_functions.hpp"
#include "crema/util/thread_pool.hpp"

#ifdef CREMA_MPI
#include <mpi.h>
#endif
#ifdef CREMA_NCCL
#include <nccl.h>
#endif

namespace crema {

// ---- AbortableBarrier ----------------------------------------------------

bool AbortableBarrier::Wait() {
  boost::unique_lock<boost::mutex> lock(mutex_);
  if (aborted_) return false;
  const uint64_t generation = generation_;
  if (++arrived_ == parties_) {
    arrived_ = 0;
    ++generation_;
    all_arrived_.notify_all();
    return true;
  }
  while (generation == generation_ && !aborted_) all_arrived_.wait(lock);
  return generation != generation_;
}

void AbortableBarrier::Abort() {
  {
    boost::lock_guard<boost::mutex> lock(mutex_);
    aborted_ = true;
  }
  all_arrived_.notify_all();
}

bool AbortableBarrier::aborted() const {
  boost::lock_guard<boost::mutex> lock(mutex_);
  return aborted_;
}

// ---- processes (MPI) -----------------------------------------------------

namespace {

#ifdef CREMA_MPI
// MPI starts only under a launcher (mpirun sets these), so a plain run of a
// CREMA_MPI build neither pays for MPI nor needs its daemons.
bool LaunchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
         std::getenv("PMIX_RANK");
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
#endif

SolverAction ActionFromCode(double code) {
  const long rounded = std::lround(code);
  if (rounded == 1) return SolverAction::STOP;
  if (rounded == 2) return SolverAction::SNAPSHOT;
  return SolverAction::NONE;
}

double ActionCode(SolverAction action) {
  return action == SolverAction::STOP ? 1 : action == SolverAction::SNAPSHOT ? 2 : 0;
}

}  // namespace

int ProcessRank() {
#ifdef CREMA_MPI
  if (MpiReady()) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
  }
#endif
  return 0;
}

int ProcessCount() {
#ifdef CREMA_MPI
  if (MpiReady()) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
  }
#endif
  return 1;
}

void FinalizeProcesses() {
#ifdef CREMA_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
#endif
}

void AbortProcesses(int status) {
#ifdef CREMA_MPI
  if (ProcessCount() > 1) MPI_Abort(MPI_COMM_WORLD, status);
#endif
}

// ---- GradientAverager ----------------------------------------------------

#ifdef CREMA_NCCL
template <typename Dtype>
struct GradientAverager<Dtype>::Nccl {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  // Per solver: marks, on the default stream, the end of the copies that
  // fill its buffer, so that its NCCL stream waits for them.
  std::vector<cudaEvent_t> filled;
};

#define NCCL_CHECK(call)                                                          \
  do {                                                                            \
    const ncclResult_t result = (call);                                           \
    CHECK_EQ(result, ncclSuccess) << "NCCL: " << ncclGetErrorString(result);      \
  } while (0)

template <typename Dtype>
void GradientAverager<Dtype>::InitNccl(const std::vector<int>& devices) {
  CHECK_EQ(static_cast<int>(devices.size()), local_solvers_);
  nccl_.reset(new Nccl());
  nccl_->comms.resize(devices.size());
  NCCL_CHECK(ncclCommInitAll(nccl_->comms.data(), static_cast<int>(devices.size()),
                             devices.data()));
  nccl_->streams.resize(devices.size());
  nccl_->filled.resize(devices.size());
  const int previous = Context::device();
  for (size_t i = 0; i < devices.size(); ++i) {
    CUDA_CHECK(cudaSetDevice(devices[i]));
    CUDA_CHECK(cudaStreamCreateWithFlags(&nccl_->streams[i], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&nccl_->filled[i], cudaEventDisableTiming));
  }
  CUDA_CHECK(cudaSetDevice(previous));
}
#endif

template <typename Dtype>
GradientAverager<Dtype>::GradientAverager(int local_solvers, int total_solvers, size_t count)
    : local_solvers_(local_solvers),
      total_solvers_(total_solvers),
      count_(count),
      barrier_(local_solvers),
      buffers_(local_solvers, nullptr),
      sum_(count + 1) {}

template <typename Dtype>
GradientAverager<Dtype>::~GradientAverager() {
#ifdef CREMA_NCCL
  if (nccl_) {
    for (ncclComm_t comm : nccl_->comms) ncclCommDestroy(comm);
    for (cudaStream_t stream : nccl_->streams) cudaStreamDestroy(stream);
    for (cudaEvent_t event : nccl_->filled) cudaEventDestroy(event);
  }
#endif
}

template <typename Dtype>
SolverAction GradientAverager<Dtype>::AllReduce(int local_index, Dtype* buffer) {
  const size_t n = count_ + 1;
#ifdef CREMA_NCCL
  if (nccl_) {
    // Every solver arrives before any enters NCCL: a torn-down run never
    // leaves one waiting inside a collective.
    if (!barrier_.Wait()) return SolverAction::STOP;
    const ncclDataType_t type = sizeof(Dtype) == sizeof(float) ? ncclFloat : ncclDouble;
    cudaStream_t stream = nccl_->streams[local_index];
    // The buffer was filled on the default stream (device copies and the
    // action slot's upload may still be in flight); the non-blocking NCCL
    // stream does not wait for that stream by itself.
    CUDA_CHECK(cudaEventRecord(nccl_->filled[local_index], cudaStreamLegacy));
    CUDA_CHECK(cudaStreamWaitEvent(stream, nccl_->filled[local_index], 0));
    NCCL_CHECK(ncclAllReduce(buffer, buffer, n, type, ncclSum, nccl_->comms[local_index], stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    gpu_scal(static_cast<int>(count_), Dtype(1) / total_solvers_, buffer);
    Dtype code = 0;
    CUDA_CHECK(cudaMemcpy(&code, buffer + count_, sizeof(Dtype), cudaMemcpyDeviceToHost));
    return ActionFromCode(code);
  }
#endif
  // Publish this solver's buffer; the barrier orders it before every read.
  buffers_[local_index] = buffer;
  if (!barrier_.Wait()) return SolverAction::STOP;
  // Reduce-scatter: this solver sums its chunk over all solvers, rank order.
  const std::vector<int64_t> bounds = BalancedSplit(static_cast<int64_t>(n), local_solvers_);
  for (int64_t i = bounds[local_index]; i < bounds[local_index + 1]; ++i) {
    Dtype sum = buffers_[0][i];
    for (int s = 1; s < local_solvers_; ++s) sum += buffers_[s][i];
    sum_[i] = sum;
  }
  if (!barrier_.Wait()) return SolverAction::STOP;
#ifdef CREMA_MPI
  if (total_solvers_ > local_solvers_) {
    // Across processes: each process's first solver adds the process sums.
    if (local_index == 0) {
      MPI_Allreduce(MPI_IN_PLACE, sum_.data(), static_cast<int>(n), MpiType<Dtype>(), MPI_SUM,
                    MPI_COMM_WORLD);
    }
    if (!barrier_.Wait()) return SolverAction::STOP;
  }
#endif
  // All-gather: every solver takes the average. sum_ is rewritten only after
  // the next first barrier, which every solver reaches after this copy.
  cpu_scale(static_cast<int>(count_), Dtype(1) / total_solvers_, sum_.data(), buffer);
  return ActionFromCode(sum_[count_]);
}

// ---- ParallelTrainer -----------------------------------------------------

// One worker solver: built on its own thread, started from the main solver's
// state, trained in step with the others.
template <typename Dtype>
class ParallelTrainer<Dtype>::Worker : public InternalThread {
 public:
  Worker(ParallelTrainer* trainer, int local_index)
      : trainer_(trainer), local_index_(local_index) {}
  ~Worker() override { StopInternalThread(); }

  Solver<Dtype>* solver() { return solver_.get(); }

 protected:
  void InternalThreadEntry() override {
    Context::set_solver_rank(trainer_->first_rank_ + local_index_);
#ifdef CREMA_CUDA
    if (!trainer_->devices_.empty()) Context::SetDevice(trainer_->devices_[local_index_]);
#endif
    solver_ = CreateSolver<Dtype>(trainer_->param_, trainer_->main_->net().get());
    {
      // The main solver waits at the start barrier meanwhile, so its state is still;
      // the workers take turns, as reading a blob may allocate its memory.
      boost::lock_guard<boost::mutex> lock(trainer_->copy_mutex_);
      solver_->CopyStateFrom(*trainer_->main_);
    }
    solver_->add_on_gradients_ready([this] {
      action_ = trainer_->Average(solver_.get(), local_index_, &host_buffer_, device_buffer_);
    });
    solver_->SetActionFunction([this] {
      const SolverAction action = action_;
      action_ = SolverAction::NONE;
      return action;
    });
#ifdef CREMA_NCCL
    if (!trainer_->devices_.empty()) {
      DeviceMalloc(reinterpret_cast<void**>(&device_buffer_),
                   (trainer_->averager_->count() + 1) * sizeof(Dtype));
    }
#endif
    if (trainer_->start_barrier_->Wait()) {
      solver_->Step(trainer_->param_.max_iter() - solver_->iter());
      trainer_->end_barrier_->Wait();
    }
#ifdef CREMA_NCCL
    if (device_buffer_) cudaFree(device_buffer_);
    device_buffer_ = nullptr;
#endif
  }

  // Never leave the others waiting for a solver that is gone.
  void OnInternalThreadFailed() override {
    trainer_->averager_->Abort();
    trainer_->start_barrier_->Abort();
    trainer_->end_barrier_->Abort();
  }

 private:
  ParallelTrainer* trainer_;
  const int local_index_;
  std::unique_ptr<Solver<Dtype>> solver_;
  std::vector<Dtype> host_buffer_;
  Dtype* device_buffer_ = nullptr;
  SolverAction action_ = SolverAction::NONE;
};

template <typename Dtype>
ParallelTrainer<Dtype>::ParallelTrainer(const SolverParameter& param, int local_solvers,
                                        const std::vector<int>& devices)
    : param_(param),
      local_solvers_(local_solvers),
      devices_(devices),
      saved_budget_(ThreadBudget()) {
  CREMA_REQUIRE(local_solvers >= 1, "the solver count must be at least 1, got " << local_solvers);
  CREMA_REQUIRE(devices.empty() || static_cast<int>(devices.size()) == local_solvers,
                "give one GPU per solver: " << devices.size() << " GPUs for " << local_solvers
                                            << " solvers");
  const int processes = ProcessCount();
  first_rank_ = ProcessRank() * local_solvers;
  Context::set_solver_count(local_solvers * processes);
  Context::set_local_solver_count(local_solvers);
  Context::set_solver_rank(first_rank_);
  Context::set_multiprocess(processes > 1);
#ifdef CREMA_CUDA
  if (!devices.empty()) {
    Context::SetDevice(devices[0]);
    Context::set_mode(Context::GPU);
  }
#endif
  // Each solver thread gets an equal share of the CPU threads.
  const int per_solver = std::max(1, saved_budget_ / local_solvers);
  if (per_solver * local_solvers > saved_budget_) {
    LOG(WARNING) << local_solvers << " solver threads exceed the thread budget of "
                 << saved_budget_ << ": the cores are oversubscribed";
  }
  SetThreadBudget(per_solver);
  LOG_IF(INFO, Context::is_rank_zero())
      << "Data-parallel training: " << local_solvers * processes << " solvers ("
      << processes << " process" << (processes > 1 ? "es" : "") << " x " << local_solvers
      << " thread" << (local_solvers > 1 ? "s" : "") << "), " << per_solver
      << " CPU thread" << (per_solver > 1 ? "s" : "") << " each";
  main_ = CreateSolver<Dtype>(param_);
  size_t count = 0;
  for (const Blob<Dtype>* blob : main_->net()->learnable_params()) count += blob->count();
  averager_.reset(new GradientAverager<Dtype>(local_solvers, local_solvers * processes, count));
#ifdef CREMA_NCCL
  if (!devices.empty() && local_solvers > 1) averager_->InitNccl(devices);
#endif
  start_barrier_.reset(new AbortableBarrier(local_solvers));
  end_barrier_.reset(new AbortableBarrier(local_solvers));
}

template <typename Dtype>
ParallelTrainer<Dtype>::~ParallelTrainer() {
  averager_->Abort();
  start_barrier_->Abort();
  end_barrier_->Abort();
  StopWorkers();
  workers_.clear();
  main_.reset();
  Context::set_solver_count(1);
  Context::set_local_solver_count(1);
  Context::set_solver_rank(0);
  SetThreadBudget(saved_budget_);
}

template <typename Dtype>
SolverAction ParallelTrainer<Dtype>::Average(Solver<Dtype>* solver, int local_index,
                                             std::vector<Dtype>* host_buffer,
                                             Dtype* device_buffer) {
  const auto& params = solver->net()->learnable_params();
  const size_t count = averager_->count();
  // Rank 0's action rides in the last slot; the other solvers add 0.
  const Dtype code = Context::is_rank_zero() && action_ ? Dtype(ActionCode(action_())) : Dtype(0);
#ifdef CREMA_NCCL
  if (device_buffer) {
    size_t offset = 0;
    for (Blob<Dtype>* blob : params) {
      gpu_memcpy(blob->count() * sizeof(Dtype), blob->gpu_diff(), device_buffer + offset);
      offset += blob->count();
    }
    CUDA_CHECK(cudaMemcpy(device_buffer + count, &code, sizeof(Dtype), cudaMemcpyHostToDevice));
    const SolverAction action = averager_->AllReduce(local_index, device_buffer);
    offset = 0;
    for (Blob<Dtype>* blob : params) {
      gpu_memcpy(blob->count() * sizeof(Dtype), device_buffer + offset, blob->mutable_gpu_diff());
      offset += blob->count();
    }
    return action;
  }
#endif
  host_buffer->resize(count + 1);
  Dtype* buffer = host_buffer->data();
  size_t offset = 0;
  for (Blob<Dtype>* blob : params) {
    cpu_copy(blob->count(), blob->cpu_diff(), buffer + offset);
    offset += blob->count();
  }
  buffer[count] = code;
  const SolverAction action = averager_->AllReduce(local_index, buffer);
  offset = 0;
  for (Blob<Dtype>* blob : params) {
    cpu_copy(blob->count(), buffer + offset, blob->mutable_cpu_diff());
    offset += blob->count();
  }
  return action;
}

template <typename Dtype>
void ParallelTrainer<Dtype>::Run(const std::string& resume_file) {
  if (!resume_file.empty()) {
    LOG_IF(INFO, Context::is_rank_zero()) << "Restoring previous solver status from " << resume_file;
    main_->Restore(resume_file);
  }
#ifdef CREMA_MPI
  if (ProcessCount() > 1) {
    // Every process resumed from the same files; fresh weights differ (each
    // rank has its own seed), so the first process's are everyone's.
    for (Blob<Dtype>* blob : main_->net()->learnable_params()) {
      MPI_Bcast(blob->mutable_cpu_data(), blob->count(), MpiType<Dtype>(), 0, MPI_COMM_WORLD);
    }
  }
#endif
  std::vector<Dtype> host_buffer;
  Dtype* device_buffer = nullptr;
#ifdef CREMA_NCCL
  if (!devices_.empty() && local_solvers_ > 1) {
    DeviceMalloc(reinterpret_cast<void**>(&device_buffer), (averager_->count() + 1) * sizeof(Dtype));
  }
#endif
  SolverAction main_action = SolverAction::NONE;
  main_->add_on_gradients_ready([this, &main_action, &host_buffer, device_buffer] {
    main_action = Average(main_.get(), 0, &host_buffer, device_buffer);
  });
  main_->SetActionFunction([&main_action] {
    const SolverAction action = main_action;
    main_action = SolverAction::NONE;
    return action;
  });
  for (int i = 1; i < local_solvers_; ++i) {
    workers_.emplace_back(new Worker(this, i));
    workers_.back()->StartInternalThread();
  }
  std::exception_ptr main_failure;
  try {
    if (start_barrier_->Wait()) main_->Solve();
  } catch (...) {
    main_failure = std::current_exception();
  }
  // Every solver ran the same iterations when the main solver reached max_iter: the
  // workers are finishing and meet it at the end barrier. Otherwise (a stop,
  // an error) some may be waiting for the main solver: wake them.
  if (main_failure || main_->iter() < param_.max_iter() || !end_barrier_->Wait()) {
    averager_->Abort();
    start_barrier_->Abort();
    end_barrier_->Abort();
  }
  StopWorkers();
#ifdef CREMA_NCCL
  if (device_buffer) cudaFree(device_buffer);
#endif
  if (main_failure) std::rethrow_exception(main_failure);
  for (const auto& worker : workers_) {
    if (worker->has_failed()) {
      LOG(ERROR) << "A solver thread failed; all solvers stopped.";
      worker->RethrowIfFailed();
    }
  }
}

template <typename Dtype>
void ParallelTrainer<Dtype>::StopWorkers() {
  for (auto& worker : workers_) worker->StopInternalThread();
}

template <typename Dtype>
std::vector<Solver<Dtype>*> ParallelTrainer<Dtype>::worker_solvers() const {
  std::vector<Solver<Dtype>*> solvers;
  for (const auto& worker : workers_) solvers.push_back(worker->solver());
  return solvers;
}

template class GradientAverager<float>;
template class GradientAverager<double>;
template class ParallelTrainer<float>;
template class ParallelTrainer<double>;

}  // namespace crema
