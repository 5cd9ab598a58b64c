// Solver: trains a net. It owns the training net and the test nets (sharing
// the training net's weights), runs the loop (forward/backward with iter_size
// accumulation, smoothed loss display, periodic tests and snapshots), and
// leaves the parameter update to its subclass (SGD and its relatives).
#ifndef CREMA_SOLVER_HPP_
#define CREMA_SOLVER_HPP_

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crema/net.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/reporter.hpp"
#include "crema/syncedmem.hpp"

namespace crema {

// What a signal (or any other client) asks the running solver to do.
enum class SolverAction { NONE, STOP, SNAPSHOT };

template <typename Dtype>
class EmaWeights;   // src/crema/ema_weights.hpp
class MetricsFile;  // crema/metrics_file.hpp

template <typename Dtype>
class Solver {
 public:
  // share_layers_from: in data-parallel training, rank 0's training net,
  // which lends this solver's training net its shareable layers; null
  // otherwise. The calling thread's Context says the solver's rank.
  explicit Solver(const SolverParameter& param, const Net<Dtype>* share_layers_from = nullptr);
  virtual ~Solver();  // (where EmaWeights is complete)

  // Trains to max_iter (from a solver state if resume_file is given),
  // snapshotting at the end if snapshot_after_train.
  virtual void Solve(const std::string& resume_file = "");
  // Runs `iters` training iterations.
  void Step(int iters);
  // Restores weights and history from a .solverstate (or .solverstate.h5).
  // A state written by Crema also holds the generator state and the data
  // layers' positions: then the nets are rebuilt with that state (each data
  // layer starting where the saved run stood), so training continues
  // bitwise as if it had not stopped. Call it before anything keeps
  // pointers into the nets.
  void Restore(const std::string& state_file);
  // Writes <prefix>_iter_N.caffemodel and .solverstate (or .caffemodel.h5
  // and .solverstate.h5), each to a temporary file renamed into place, and
  // <prefix>_iter_N.ema.caffemodel(.h5) when ema_decay keeps an average.
  void Snapshot();
  // Runs every test net for test_iter batches and logs the mean outputs
  // (with the weights' moving average, when ema_decay keeps one).
  void TestAll();

  const SolverParameter& param() const { return param_; }
  const std::shared_ptr<Net<Dtype>>& net() const { return net_; }
  const std::vector<std::shared_ptr<Net<Dtype>>>& test_nets() const { return test_nets_; }
  int iter() const { return iter_; }
  Dtype smoothed_loss() const { return reporter_.smoothed_loss(); }
  virtual const char* type() const { return ""; }

  // Takes another solver's iteration, step, weights and history (a worker
  // starting from the root's state in data-parallel training).
  void CopyStateFrom(const Solver& other);

  // Solve writes the run's metrics file here (crema/metrics_file.hpp):
  // anew, or appended to when it resumes. Rank 0 only; empty: none.
  void set_metrics_file(const std::string& path) { metrics_path_ = path; }

  // Polled once per iteration; STOP and SNAPSHOT are acted upon.
  void SetActionFunction(std::function<SolverAction()> action) { action_ = std::move(action); }

  // Runs at the start of each iteration, before its forward passes (Python's
  // solver.add_callback).
  void add_on_start(std::function<void()> callback) { on_start_.push_back(std::move(callback)); }
  // Runs after the gradients of each iteration are ready, before the update
  // (data-parallel training's gradient averaging; Python's add_callback).
  void add_on_gradients_ready(std::function<void()> callback) {
    on_gradients_ready_.push_back(std::move(callback));
  }

  // Scales, regularises and applies the gradients of one iteration (public
  // for Python's solver.apply_update, as in Caffe).
  virtual void ApplyUpdate() = 0;

  // The learning rate at the current iteration (lr_policy).
  Dtype GetLearningRate() const;

 protected:
  // Adds the subclass's part (its history) to the state being written.
  virtual void SnapshotSolverState(SolverState* state) = 0;
  virtual void RestoreSolverState(const SolverState& state) = 0;
  virtual void CopyHistoryFrom(const Solver& other) = 0;

  // Fails, naming the prefix, where snapshots are due and their folder is
  // missing or not writable.
  void RequireSnapshotFolder() const;
  // The training net, then the test nets.
  std::vector<const Net<Dtype>*> AllNets() const;
  // Writes <stem>.ema.caffemodel(.h5): the weights' moving average.
  void SnapshotEma(const std::string& stem, bool hdf5);
  // Writes <stem>.caffemodel and <stem>.solverstate (Snapshot's files).
  void SnapshotAs(const std::string& stem);
  // Runs one test net and logs its mean outputs; adds those with a single
  // value (and mAPs) to *named, by name, where not already there.
  void Test(int test_net_id, std::map<std::string, double>* named);
  // best_output: compares this test's value with the best so far,
  // snapshotting a better one as <prefix>_best and counting the tests
  // without improvement; sets early_stopped_ when they reach the patience.
  void WatchBest(const std::map<std::string, double>& named);
  // best_output names a single-value output (or an mAP) of a test net.
  void RequireWatchedOutput() const;

  SolverParameter param_;
  int iter_ = 0;
  // multistep's step, and the plateau policy's (also in its solver state).
  int current_step_ = 0;
  // The plateau policy's loss minimum and its last event (lr_schedule.hpp's
  // PlateauState, with current_step_ as its step).
  float minimum_loss_ = std::numeric_limits<float>::max();
  int iter_last_event_ = 0;
  std::shared_ptr<Net<Dtype>> net_;
  std::vector<std::shared_ptr<Net<Dtype>>> test_nets_;
  TrainingReporter<Dtype> reporter_;
  std::function<SolverAction()> action_;
  std::vector<std::function<void()>> on_start_;
  std::vector<std::function<void()>> on_gradients_ready_;
  bool requested_early_exit_ = false;
  // best_output's record (rank 0; kept in the solver state).
  bool has_best_ = false;
  double best_value_ = 0;
  int best_iter_ = 0;
  int tests_since_best_ = 0;
  // The patience ran out: training ends as if stopped (Solve).
  bool early_stopped_ = false;
  bool warned_nonfinite_ = false;
  // The device flag GradientsFinite raises (one int, reused every iteration).
  SyncedMemory nonfinite_flag_{sizeof(int)};
  const Net<Dtype>* const share_layers_from_;
  // What Restore read of the data layers' positions, handed to the nets it
  // rebuilds (null before a resume).
  std::unique_ptr<SolverState> resume_state_;
  // The weights' moving average (ema_decay; rank 0 only, which tests and
  // snapshots), null without one.
  std::unique_ptr<EmaWeights<Dtype>> ema_;
  std::string metrics_path_;
  std::unique_ptr<MetricsFile> metrics_;  // open while Solve runs

 private:
  void BuildNets();
  void InitTrainNet();
  void RequireTestNetForInterval(int num_test_nets) const;
  void InitTestNets();
  // Fails (on_nonfinite: STOP) or warns once (WARN) when the iteration's
  // loss or gradient is not finite, naming the iteration and where it began.
  void WatchForNonFinite(Dtype loss);
  // The end of the run for every net (Net::Finish: HDF5Output's files).
  void FinishNets();
  // Opens metrics_path_ (Solve, after any restore) and has the reporter's
  // displays write training lines to it.
  void OpenMetricsFile();
  // plateau: moves its state on with this iteration's smoothed loss.
  void AdvancePlateauStep();
  // Multistep: advances current_step_ to the step iter_ has reached.
  void AdvanceLearningRateStep();
  // Runs every test net if the test interval says so (rank 0 only); true
  // when a stop was asked for meanwhile.
  bool TestIfDue();
  // Snapshots if the snapshot interval or the action asks for it; true when
  // the action asks to stop.
  bool HandleAction(SolverAction action);
  SolverAction RequestedAction() const { return action_ ? action_() : SolverAction::NONE; }

  DISABLE_COPY_AND_ASSIGN(Solver);
};

}  // namespace crema

#endif  // CREMA_SOLVER_HPP_
