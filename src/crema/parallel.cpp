#include "crema/parallel.hpp"

#include <cmath>
#include <cstdlib>

#include "crema/sgd_solvers.hpp"
#include "crema/transport/gradient_transport.hpp"
#include "crema/transport/processes.hpp"
#include "crema/util/thread_pool.hpp"

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

namespace {

// Rank 0's action rides with the gradients as a number.
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
    if (!trainer_->devices_.empty()) Context::SetDevice(trainer_->devices_[local_index_]);
    solver_ = CreateSolver<Dtype>(trainer_->param_, trainer_->main_->net().get());
    {
      // The main solver waits at the start barrier meanwhile, so its state is still;
      // the workers take turns, as reading a blob may allocate its memory.
      boost::lock_guard<boost::mutex> lock(trainer_->copy_mutex_);
      solver_->CopyStateFrom(*trainer_->main_);
    }
    solver_->add_on_gradients_ready(
        [this] { action_ = trainer_->Average(solver_.get(), local_index_); });
    solver_->SetActionFunction([this] {
      const SolverAction action = action_;
      action_ = SolverAction::NONE;
      return action;
    });
    if (trainer_->start_barrier_->Wait()) {
      solver_->Step(trainer_->param_.max_iter() - solver_->iter());
      trainer_->end_barrier_->Wait();
    }
  }

  // Never leave the others waiting for a solver that is gone.
  void OnInternalThreadFailed() override {
    trainer_->transport_->Abort();
    trainer_->start_barrier_->Abort();
    trainer_->end_barrier_->Abort();
  }

 private:
  ParallelTrainer* trainer_;
  const int local_index_;
  std::unique_ptr<Solver<Dtype>> solver_;
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
  if (!devices.empty()) {
    Context::SetDevice(devices[0]);
    Context::set_mode(Context::GPU);
  }
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
  transport_ =
      MakeGradientTransport<Dtype>(local_solvers, local_solvers * processes, count, devices);
  start_barrier_.reset(new AbortableBarrier(local_solvers));
  end_barrier_.reset(new AbortableBarrier(local_solvers));
}

template <typename Dtype>
ParallelTrainer<Dtype>::~ParallelTrainer() {
  transport_->Abort();
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
SolverAction ParallelTrainer<Dtype>::Average(Solver<Dtype>* solver, int local_index) {
  // Rank 0's action rides along; the other solvers add 0.
  Dtype code = Context::is_rank_zero() && action_ ? Dtype(ActionCode(action_())) : Dtype(0);
  if (!transport_->Average(local_index, solver->net()->learnable_params(), &code)) {
    return SolverAction::STOP;
  }
  return ActionFromCode(code);
}

template <typename Dtype>
void ParallelTrainer<Dtype>::Run(const std::string& resume_file) {
  if (!resume_file.empty()) {
    LOG_IF(INFO, Context::is_rank_zero()) << "Restoring previous solver status from " << resume_file;
    main_->Restore(resume_file);
  }
  if (ProcessCount() > 1) {
    // Every process resumed from the same files; fresh weights differ (each
    // rank has its own seed), so the first process's are everyone's.
    for (Blob<Dtype>* blob : main_->net()->learnable_params()) {
      BroadcastFromFirstProcess(blob->mutable_cpu_data(), blob->count());
    }
  }
  SolverAction main_action = SolverAction::NONE;
  main_->add_on_gradients_ready([this, &main_action] { main_action = Average(main_.get(), 0); });
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
    transport_->Abort();
    start_barrier_->Abort();
    end_barrier_->Abort();
  }
  StopWorkers();
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

template class ParallelTrainer<float>;
template class ParallelTrainer<double>;

}  // namespace crema
