#include "crema/solver.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "crema/ema_weights.hpp"
#include "crema/format/fork_fields.hpp"
#include "crema/lr_schedule.hpp"
#include "crema/metrics_file.hpp"
#include "crema/solver_watch.hpp"
#include "crema/storage/hdf5.hpp"
#include "crema/util/io.hpp"
#include "crema/util/upgrade_proto.hpp"

namespace crema {

namespace {
// Whether a state written by Crema holds data layers' positions.
bool HoldsLayerPositions(const SolverState& state) {
  return state.data_position_size() > 0 || state.hdf5_data_position_size() > 0 ||
         state.image_data_position_size() > 0;
}

// Intel's local_lr_auto and NVCaffe's larc replace each blob's lr_mult by a
// trust ratio; both forks apply it to SGD, and Crema to SGD, Nesterov and SGDW.
void RequireLayerWiseRatesMeaningful(const SolverParameter& param) {
  if (!param.local_lr_auto() && !param.larc()) return;
  CREMA_REQUIRE(!(param.local_lr_auto() && param.larc()),
                "solver: local_lr_auto (Intel's LARS) and larc (NVCaffe's LARC) are two "
                "layer-wise rates; give one");
  CREMA_REQUIRE(param.type() == "SGD" || param.type() == "Nesterov" || param.type() == "SGDW",
                "solver: " << (param.larc() ? "larc" : "local_lr_auto")
                           << " applies to SGD (and Nesterov, SGDW), not to type " << param.type());
  const double ratio = param.larc() ? param.larc_eta() : param.local_gw_ratio();
  CREMA_REQUIRE(std::isfinite(ratio) && ratio > 0,
                "solver: " << (param.larc() ? "larc_eta" : "local_gw_ratio") << " is " << ratio
                           << "; the trust ratio's factor must be positive");
  CREMA_REQUIRE(!param.larc() || param.larc_policy() == "scale" || param.larc_policy() == "clip",
                "solver: unknown larc_policy '" << param.larc_policy() << "' (scale, clip)");
}

void RequireSettingsMeaningful(const SolverParameter& param) {
  // The nets inside are checked when they are built.
  CheckForkFields(param, "solver", {"net_param", "train_net_param", "test_net_param"});
  RequireFinite(param.base_lr(), "base_lr", true);
  RequireFinite(param.momentum(), "momentum", true);
  RequireFinite(param.weight_decay(), "weight_decay", true);
  RequireFinite(param.delta(), "delta", true);
  RequireFinite(param.momentum2(), "momentum2", true);
  RequireFinite(param.clip_gradients(), "clip_gradients", false);
  CREMA_REQUIRE(param.max_iter() >= 0,
                "solver: max_iter is " << param.max_iter() << "; it must not be negative");
  RequireScheduleMeaningful(param);
  // Each solver of a data-parallel run sees its own loss: their plateau
  // steps would part, and so would their weights.
  CREMA_REQUIRE(param.lr_policy() != "plateau" || Context::solver_count() == 1,
                "solver: lr_policy plateau follows one solver's loss; with "
                    << Context::solver_count() << " solvers use another policy");
  CREMA_REQUIRE(param.early_stop_patience() >= 0,
                "solver: early_stop_patience is " << param.early_stop_patience()
                                                  << "; give a number of tests (0: never stop)");
  CREMA_REQUIRE(param.early_stop_patience() == 0 || !param.best_output().empty(),
                "solver: early_stop_patience needs best_output, the test output it watches");
  if (param.has_ema_decay()) {
    CREMA_REQUIRE(
        std::isfinite(param.ema_decay()) && param.ema_decay() > 0 && param.ema_decay() < 1,
        "solver: ema_decay is " << param.ema_decay()
                                << "; the old average's weight must lie in (0, 1)");
  }
  RequireLayerWiseRatesMeaningful(param);
  CREMA_REQUIRE(param.regularization_type() != "decoupled",
                "solver: regularization_type \"decoupled\" is jolibrain/caffe's decoupled weight "
                "decay, whose code Crema could not read; Crema's own decoupled decay is type "
                "SGDW or AdamW with regularization_type L2 (docs/training.md)");
  CREMA_REQUIRE(
      param.eval_type() == "classification" || param.eval_type() == "detection",
      "solver: unknown eval_type '" << param.eval_type() << "' (classification, detection)");
  CREMA_REQUIRE(
      param.ap_version() == "11point" || param.ap_version() == "MaxIntegral" ||
          param.ap_version() == "Integral",
      "solver: unknown ap_version '" << param.ap_version() << "' (11point, MaxIntegral, Integral)");
}

// eval_type "detection": the test net must have an output to evaluate.
template <typename Dtype>
void RequireDetectionOutput(const Net<Dtype>& net, const std::string& origin) {
  for (size_t layer = 0; layer < net.layers().size(); ++layer) {
    if (std::string(net.layers()[layer]->type()) != "DetectionEvaluate") continue;
    for (int top : net.top_id_vecs()[layer]) {
      const auto& outputs = net.output_blob_indices();
      if (std::find(outputs.begin(), outputs.end(), top) != outputs.end()) return;
    }
  }
  CREMA_FAIL(origin << ": eval_type is detection, but the test net has no DetectionEvaluate "
                       "output to compute mean average precision from");
}

// Each output blob of net by name, with its values.
template <typename Dtype>
MetricsFile::Outputs NamedOutputs(const Net<Dtype>& net) {
  MetricsFile::Outputs outputs;
  for (size_t j = 0; j < net.output_blobs().size(); ++j) {
    const Blob<Dtype>& blob = *net.output_blobs()[j];
    outputs.emplace_back(net.blob_names()[net.output_blob_indices()[j]],
                         std::vector<double>(blob.cpu_data(), blob.cpu_data() + blob.count()));
  }
  return outputs;
}

}  // namespace

template <typename Dtype>
Solver<Dtype>::Solver(const SolverParameter& param, const Net<Dtype>* share_layers_from)
    : param_(SolverTypeUpgraded(param)),
      reporter_(param_, Context::solver_count(), Context::is_rank_zero()),
      share_layers_from_(share_layers_from) {
  CREMA_REQUIRE(param_.average_loss() >= 1, "solver: average_loss must be at least 1");
  CREMA_REQUIRE(param_.iter_size() >= 1, "solver: iter_size must be at least 1");
  RequireSettingsMeaningful(param_);
  if (param_.has_ema_decay() && Context::is_rank_zero()) {
    ema_.reset(new EmaWeights<Dtype>(param_.ema_decay()));
  }
  BuildNets();
  if (ema_) {
    std::vector<const LayerParameter*> layers;
    for (const auto& layer : net_->layers()) layers.push_back(&layer->layer_param());
    const std::string advice = SlowBatchNormAdvice(layers);
    LOG_IF(WARNING, !advice.empty()) << "solver: " << advice;
  }
  LOG_IF(INFO, Context::is_rank_zero()) << "Solver scaffolding done.";
  LOG_IF(INFO, Context::is_rank_zero() && param_.max_iter() > 0)
      << "Learning rate schedule: " << DescribeSchedule(param_);
}

// Seeds the thread (random_seed + rank) and builds the nets; Restore repeats
// it to rebuild them with the same draws.
template <typename Dtype>
void Solver<Dtype>::BuildNets() {
  if (param_.random_seed() >= 0) {
    Context::set_random_seed(static_cast<uint64_t>(param_.random_seed()) + Context::solver_rank());
  }
  InitTrainNet();
  if (Context::is_rank_zero()) InitTestNets();
}

template <typename Dtype>
void Solver<Dtype>::InitTrainNet() {
  const int sources = param_.has_train_net_param() + param_.has_train_net() +
                      param_.has_net_param() + param_.has_net();
  CREMA_REQUIRE(sources == 1,
                "solver: give exactly one of net, net_param, train_net, "
                "train_net_param (found "
                    << sources << ")");
  NetParameter net_param;
  if (param_.has_train_net_param()) {
    net_param.CopyFrom(param_.train_net_param());
  } else if (param_.has_train_net()) {
    ReadNetParamsFromTextFile(param_.train_net(), &net_param);
  } else if (param_.has_net_param()) {
    net_param.CopyFrom(param_.net_param());
  } else {
    ReadNetParamsFromTextFile(param_.net(), &net_param);
  }
  // The solver's train_state, then the net's own state, decide its layers.
  NetState state;
  state.set_phase(TRAIN);
  state.MergeFrom(net_param.state());
  state.MergeFrom(param_.train_state());
  net_param.mutable_state()->CopyFrom(state);
  NetOptions<Dtype> options;
  options.share_layers_from = share_layers_from_;
  options.solvers_sharing_layers = Context::local_solver_count();
  options.resume_state = resume_state_.get();
  options.log = Context::is_rank_zero();
  const std::string origin = param_.has_train_net() ? param_.train_net()
                             : param_.has_net()     ? param_.net()
                                                    : "solver: train net";
  WithOrigin(origin, [&] { net_.reset(new Net<Dtype>(net_param, options)); });
  // max_iter: 0 is the way to write a net's initial weights: nothing trains.
  if (!param_.allow_no_loss() && param_.max_iter() > 0) RequireLoss(*net_, origin);
}

// A test_interval with no test net would never test, and say nothing: the
// usual cause is a train/test net given as `net` without its test_iter.
template <typename Dtype>
void Solver<Dtype>::RequireTestNetForInterval(int num_test_nets) const {
  if (num_test_nets > 0 || param_.test_interval() <= 0) return;
  if (param_.has_net() || param_.has_net_param()) {
    const std::string net =
        param_.has_net() ? "net " + param_.net() : "net_param '" + param_.net_param().name() + "'";
    CREMA_FAIL("solver: test_interval is " << param_.test_interval() << " but test_iter is not "
                                           << "given, so the TEST phase of " << net
                                           << " would never run; give test_iter: <batches per "
                                              "test> (or remove test_interval)");
  }
  CREMA_FAIL("solver: test_interval is " << param_.test_interval()
                                         << " but there is no test net (test_net or "
                                            "test_net_param with its test_iter); give one, or "
                                            "remove test_interval");
}

template <typename Dtype>
void Solver<Dtype>::InitTestNets() {
  const bool generic = param_.has_net() || param_.has_net_param();
  const int num_specific = param_.test_net_size() + param_.test_net_param_size();
  const int num_generic = generic ? param_.test_iter_size() - num_specific : 0;
  const int num_nets = num_specific + (num_generic > 0 ? num_generic : 0);
  CREMA_REQUIRE(param_.test_iter_size() == num_nets,
                "solver: test_iter has " << param_.test_iter_size() << " values for " << num_nets
                                         << " test nets; give one per test net");
  CREMA_REQUIRE(num_nets == 0 || param_.test_interval() > 0,
                "solver: test nets are defined but test_interval is not positive");
  RequireTestNetForInterval(num_nets);
  for (int i = 0; i < num_nets; ++i) {
    CREMA_REQUIRE(param_.test_iter(i) > 0, "solver: test_iter "
                                               << i << " is " << param_.test_iter(i)
                                               << "; give the number of batches per test (> 0)");
  }
  CREMA_REQUIRE(param_.test_state_size() == 0 || param_.test_state_size() == num_nets,
                "solver: test_state has " << param_.test_state_size() << " entries for " << num_nets
                                          << " test nets; give one per test net");
  std::vector<NetParameter> params(num_nets);
  int id = 0;
  for (const NetParameter& p : param_.test_net_param()) params[id++].CopyFrom(p);
  for (const std::string& file : param_.test_net()) ReadNetParamsFromTextFile(file, &params[id++]);
  for (; id < num_nets; ++id) {
    if (param_.has_net_param()) {
      params[id].CopyFrom(param_.net_param());
    } else {
      ReadNetParamsFromTextFile(param_.net(), &params[id]);
    }
  }
  test_nets_.clear();
  for (int i = 0; i < num_nets; ++i) {
    NetState state;
    state.set_phase(TEST);
    state.MergeFrom(params[i].state());
    if (param_.test_state_size()) state.MergeFrom(param_.test_state(i));
    params[i].mutable_state()->CopyFrom(state);
    LOG(INFO) << "Creating test net (#" << i << ")";
    NetOptions<Dtype> options;
    options.resume_state = resume_state_.get();
    const std::string origin =
        i < param_.test_net_param_size() ? "solver: test net #" + std::to_string(i)
        : i < num_specific               ? param_.test_net(i - param_.test_net_param_size())
        : param_.has_net()               ? param_.net()
                                         : "solver: test net #" + std::to_string(i);
    WithOrigin(origin, [&] { test_nets_.emplace_back(new Net<Dtype>(params[i], options)); });
    test_nets_.back()->ShareTrainedLayersWith(net_.get());
    if (param_.eval_type() == "detection") RequireDetectionOutput(*test_nets_.back(), origin);
  }
  if (!param_.best_output().empty()) RequireWatchedOutput();
}

// best_output must be a single-value output (or a DetectionEvaluate's) of
// some test net: found out before training, not at the first test.
template <typename Dtype>
void Solver<Dtype>::RequireWatchedOutput() const {
  const std::string& name = param_.best_output();
  std::string outputs;
  for (const auto& test_net : test_nets_) {
    for (int blob_id : test_net->output_blob_indices()) {
      const std::string& output = test_net->blob_names()[blob_id];
      if (output == name &&
          (test_net->blobs()[blob_id]->count() == 1 || IsDetectionEvaluation(*test_net, blob_id))) {
        return;
      }
      outputs += (outputs.empty() ? "" : ", ") + output;
    }
  }
  CREMA_FAIL("solver: best_output '" << name << "' is not a single-value output of any test net"
                                     << (test_nets_.empty() ? " (there is no test net)"
                                                            : " (their outputs: " + outputs + ")"));
}

template <typename Dtype>
Dtype Solver<Dtype>::GetLearningRate() const {
  return Dtype(LearningRate(param_, iter_, current_step_));
}

template <typename Dtype>
Solver<Dtype>::~Solver() = default;

template <typename Dtype>
void Solver<Dtype>::Step(int iters) {
  if (Context::is_rank_zero() && iters > 0) RequireSnapshotFolder();
  if (ema_ && !ema_->started()) ema_->Start(net_->learnable_params());
  const int stop_iter = iter_ + iters;
  reporter_.Start(iter_);
  while (iter_ < stop_iter) {
    AdvanceLearningRateStep();
    net_->ClearParamDiffs();
    if (TestIfDue()) break;
    for (auto& callback : on_start_) callback();
    Dtype loss = 0;
    for (int i = 0; i < param_.iter_size(); ++i) loss += net_->ForwardBackward();
    reporter_.Iterated(iter_, loss / param_.iter_size(), *net_);
    AdvancePlateauStep();
    for (auto& callback : on_gradients_ready_) callback();
    WatchForNonFinite(loss / param_.iter_size());
    ApplyUpdate();
    if (ema_) ema_->Update(net_->learnable_params());
    ++iter_;
    if (HandleAction(RequestedAction())) break;
  }
}

// Checked after the gradients are averaged, so that every solver of a
// data-parallel run sees the same gradients and stops together.
template <typename Dtype>
void Solver<Dtype>::WatchForNonFinite(Dtype loss) {
  const bool finite_loss = std::isfinite(loss);
  if (finite_loss && GradientsFinite(*net_, &nonfinite_flag_)) return;
  if (param_.on_nonfinite() == SolverParameter::WARN && warned_nonfinite_) return;
  std::ostringstream what;
  what << "iteration " << iter_ << ": "
       << (finite_loss ? std::string("the gradient is not finite")
                       : "the loss is " + (std::isnan(loss) ? std::string("nan")  // any sign
                                                            : std::to_string(loss)))
       << "; " << FirstNonFinite(*net_);
  if (param_.on_nonfinite() == SolverParameter::WARN) {
    LOG(WARNING) << what.str()
                 << " (on_nonfinite: WARN, so training goes on; later "
                    "non-finite iterations are not reported)";
    warned_nonfinite_ = true;
    return;
  }
  CREMA_FAIL(what.str() << "; training stopped before this update, so the weights and the last "
                           "snapshot hold no NaN (on_nonfinite: WARN trains on, as Caffe does)");
}

template <typename Dtype>
void Solver<Dtype>::AdvancePlateauStep() {
  if (param_.lr_policy() != "plateau") return;
  PlateauState state{minimum_loss_, iter_last_event_, current_step_};
  AdvancePlateau(param_, iter_, static_cast<float>(reporter_.smoothed_loss()), &state);
  if (state.step != current_step_) {
    LOG_IF(INFO, Context::is_rank_zero())
        << "Plateau: iteration " << iter_ << ", step " << state.step << " (minimum loss "
        << state.minimum_loss << ")";
  }
  minimum_loss_ = state.minimum_loss;
  iter_last_event_ = state.iter_last_event;
  current_step_ = state.step;
}

template <typename Dtype>
void Solver<Dtype>::AdvanceLearningRateStep() {
  while (param_.lr_policy() == "multistep" && current_step_ < param_.stepvalue_size() &&
         iter_ >= param_.stepvalue(current_step_)) {
    ++current_step_;
  }
}

template <typename Dtype>
bool Solver<Dtype>::TestIfDue() {
  if (param_.test_interval() && iter_ % param_.test_interval() == 0 &&
      (iter_ > 0 || param_.test_initialization()) && Context::is_rank_zero()) {
    TestAll();
    return requested_early_exit_ || early_stopped_;
  }
  return false;
}

template <typename Dtype>
bool Solver<Dtype>::HandleAction(SolverAction action) {
  if (Context::is_rank_zero() &&
      ((param_.snapshot() && iter_ % param_.snapshot() == 0) || action == SolverAction::SNAPSHOT)) {
    Snapshot();
  }
  if (action != SolverAction::STOP) return false;
  requested_early_exit_ = true;
  return true;
}

template <typename Dtype>
void Solver<Dtype>::Solve(const std::string& resume_file) {
  LOG(INFO) << "Solving " << net_->name();
  LOG(INFO) << "Learning Rate Policy: " << param_.lr_policy();
  requested_early_exit_ = false;
  early_stopped_ = false;
  if (!resume_file.empty()) {
    LOG(INFO) << "Restoring previous solver status from " << resume_file;
    Restore(resume_file);
  }
  OpenMetricsFile();
  Step(param_.max_iter() - iter_);
  // Only the root solver keeps the work and reports.
  if (!Context::is_rank_zero()) return;
  if (requested_early_exit_ || early_stopped_) {
    // Stopped by a signal or by early stop: keep the work, then leave.
    Snapshot();
    FinishNets();
    metrics_.reset();
    LOG(INFO) << "Optimization stopped early.";
    return;
  }
  if (param_.snapshot_after_train() && (!param_.snapshot() || iter_ % param_.snapshot() != 0)) {
    Snapshot();
  }
  if (param_.display() && iter_ % param_.display() == 0) {
    Dtype loss;
    net_->Forward(&loss);
    reporter_.Finished(iter_, loss);
  }
  if (param_.test_interval() && iter_ % param_.test_interval() == 0) TestAll();
  FinishNets();
  metrics_.reset();
  LOG(INFO) << "Optimization Done.";
}

template <typename Dtype>
void Solver<Dtype>::OpenMetricsFile() {
  if (metrics_path_.empty() || !Context::is_rank_zero()) return;
  metrics_.reset(new MetricsFile(metrics_path_, iter_ > 0));
  LOG(INFO) << "Metrics go to " << metrics_path_ << (iter_ > 0 ? " (appended)" : "");
  reporter_.set_display_listener([this](int iter, Dtype loss, double images_per_second) {
    if (metrics_) {
      metrics_->Train(iter, LearningRate(param_, iter, current_step_), loss, images_per_second,
                      NamedOutputs(*net_));
    }
  });
}

template <typename Dtype>
void Solver<Dtype>::FinishNets() {
  net_->Finish();
  for (const auto& test_net : test_nets_) test_net->Finish();
}

template <typename Dtype>
void Solver<Dtype>::TestAll() {
  // The test nets share the training net's weights: they see the average.
  EmaSwappedIn<Dtype> average(ema_.get(), net_->learnable_params());
  std::map<std::string, double> named;
  for (size_t id = 0; id < test_nets_.size() && !requested_early_exit_; ++id) {
    Test(static_cast<int>(id), &named);
  }
  if (!param_.best_output().empty() && !requested_early_exit_) WatchBest(named);
}

template <typename Dtype>
void Solver<Dtype>::WatchBest(const std::map<std::string, double>& named) {
  const std::string& name = param_.best_output();
  const auto found = named.find(name);
  CHECK(found != named.end()) << "RequireWatchedOutput admitted '" << name << "'";
  const double value = found->second;
  const bool better =
      !has_best_ ||
      (param_.best_mode() == SolverParameter::MAX ? value > best_value_ : value < best_value_);
  if (better) {
    has_best_ = true;
    best_value_ = value;
    best_iter_ = iter_;
    tests_since_best_ = 0;
    LOG(INFO) << "Best " << name << " so far: " << value << " at iteration " << iter_;
    SnapshotAs(param_.snapshot_prefix() + "_best");
    return;
  }
  ++tests_since_best_;
  LOG(INFO) << name << " " << value << " is no better than the best, " << best_value_
            << " at iteration " << best_iter_ << " (" << tests_since_best_ << " test"
            << (tests_since_best_ == 1 ? "" : "s") << " ago)";
  const int patience = param_.early_stop_patience();
  if (patience > 0 && tests_since_best_ >= patience) {
    LOG(INFO) << "Early stop at iteration " << iter_ << ": " << name << " has not improved for "
              << patience << " tests; the best, " << best_value_ << " at iteration " << best_iter_
              << ", is " << param_.snapshot_prefix() << "_best.caffemodel";
    early_stopped_ = true;
  }
}

template <typename Dtype>
void Solver<Dtype>::Test(int test_net_id, std::map<std::string, double>* named) {
  LOG(INFO) << "Iteration " << iter_ << ", Testing net (#" << test_net_id << ")";
  Net<Dtype>* test_net = test_nets_[test_net_id].get();
  OutputMeans<Dtype> means({param_.ap_version()}, param_.show_per_class_result());
  Dtype loss = 0;
  for (int i = 0; i < param_.test_iter(test_net_id); ++i) {
    if (RequestedAction() == SolverAction::STOP) {
      requested_early_exit_ = true;
      LOG(INFO) << "Test interrupted.";
      return;
    }
    Dtype iter_loss;
    test_net->Forward(&iter_loss);
    if (param_.test_compute_loss()) loss += iter_loss;
    means.Add(*test_net);
  }
  if (param_.test_compute_loss()) {
    LOG(INFO) << "Test loss: " << loss / param_.test_iter(test_net_id);
  }
  means.Report(*test_net, "Test net output", LogInfoSink());
  const std::map<std::string, double> test_means = means.NamedMeans(*test_net);
  for (const auto& [name, value] : test_means) named->emplace(name, value);
  if (metrics_) {
    MetricsFile::Outputs outputs;
    for (const auto& [name, value] : test_means)
      outputs.emplace_back(name, std::vector<double>{value});
    metrics_->Test(iter_, test_net_id, outputs);
  }
}

// A snapshot the run will write must have a folder to go to: found out
// before the first iteration, not after the training.
template <typename Dtype>
void Solver<Dtype>::RequireSnapshotFolder() const {
  if (param_.snapshot() <= 0 && !param_.snapshot_after_train()) return;
  const std::string prefix = param_.snapshot_prefix();
  const std::string problem = FolderProblem(prefix);
  CREMA_REQUIRE(problem.empty(), "solver: snapshot_prefix '"
                                     << prefix << "': " << problem
                                     << (problem.find("does not exist") != std::string::npos
                                             ? "; create it before training"
                                             : ""));
}

template <typename Dtype>
void Solver<Dtype>::Snapshot() {
  SnapshotAs(param_.snapshot_prefix() + "_iter_" + std::to_string(iter_));
}

template <typename Dtype>
void Solver<Dtype>::SnapshotAs(const std::string& stem) {
  CHECK(Context::is_rank_zero());
  const bool hdf5 = param_.snapshot_format() == SolverParameter::HDF5;
  std::string model_filename;
  if (hdf5) {
    model_filename = stem + ".caffemodel.h5";
    LOG(INFO) << "Snapshotting to HDF5 file " << model_filename;
    net_->ToHDF5(model_filename, param_.snapshot_diff());
  } else {
    model_filename = stem + ".caffemodel";
    LOG(INFO) << "Snapshotting to binary proto file " << model_filename;
    NetParameter net_param;
    net_->ToProto(&net_param, param_.snapshot_diff());
    WriteProtoToBinaryFile(net_param, model_filename);
  }
  if (ema_ && ema_->started()) SnapshotEma(stem, hdf5);
  SolverState state;
  state.set_iter(iter_);
  state.set_learned_net(model_filename);
  state.set_solver_type(type());
  state.set_current_step(current_step_);
  if (param_.lr_policy() == "plateau") {
    state.set_minimum_loss(minimum_loss_);
    state.set_iter_last_event(iter_last_event_);
  }
  SnapshotSolverState(&state);
  if (ema_ && ema_->started()) ema_->ToState(&state);
  if (has_best_) {
    state.set_best_value(best_value_);
    state.set_best_iter(best_iter_);
    state.set_tests_since_best(tests_since_best_);
  }
  state.set_rng_state(Context::rng().State());
  for (const auto* net : AllNets()) net->AppendResumeState(&state);
  const std::string state_filename = stem + (hdf5 ? ".solverstate.h5" : ".solverstate");
  if (hdf5) {
    LOG(INFO) << "Snapshotting solver state to HDF5 file " << state_filename;
    WriteSolverStateToHDF5(state_filename, state);
  } else {
    LOG(INFO) << "Snapshotting solver state to binary proto file " << state_filename;
    WriteProtoToBinaryFile(state, state_filename);
  }
}

// The weights' moving average as a weights file of its own, beside the
// snapshot's: what a deploy net of the averaged model loads.
template <typename Dtype>
void Solver<Dtype>::SnapshotEma(const std::string& stem, bool hdf5) {
  EmaSwappedIn<Dtype> average(ema_.get(), net_->learnable_params());
  const std::string filename = stem + (hdf5 ? ".ema.caffemodel.h5" : ".ema.caffemodel");
  LOG(INFO) << "Snapshotting the weights' moving average to " << filename;
  if (hdf5) {
    net_->ToHDF5(filename, false);
  } else {
    NetParameter net_param;
    net_->ToProto(&net_param, false);
    WriteProtoToBinaryFile(net_param, filename);
  }
}

template <typename Dtype>
std::vector<const Net<Dtype>*> Solver<Dtype>::AllNets() const {
  std::vector<const Net<Dtype>*> nets{net_.get()};
  for (const auto& test_net : test_nets_) nets.push_back(test_net.get());
  return nets;
}

template <typename Dtype>
void Solver<Dtype>::Restore(const std::string& state_file) {
  CREMA_REQUIRE(!EndsWith(state_file, ".caffemodel") && !EndsWith(state_file, ".caffemodel.h5"),
                state_file << ": a weights file, not a solver state: to start from these "
                              "weights give them as --weights; to resume a run give the "
                              ".solverstate written beside them");
  SolverState state;
  if (EndsWith(state_file, ".h5")) {
    ReadSolverStateFromHDF5(state_file, &state);
  } else {
    ReadProtoFromBinaryFile(state_file, &state);
  }
  // A state from Caffe has no type; one from Crema must be this solver's.
  CREMA_REQUIRE(!state.has_solver_type() || state.solver_type() == type(),
                state_file << ": written by the " << state.solver_type()
                           << " solver, and this run's solver is " << type()
                           << ": its history means nothing to " << type()
                           << " (resume with type: \"" << state.solver_type()
                           << "\", or start from the weights with --weights)");
  // The iteration indexes the lr schedule, the snapshot names and the run's
  // remaining steps: a negative one is no run's.
  CREMA_REQUIRE(state.iter() >= 0,
                state_file << ": iter " << state.iter() << " is negative; no run stands there");
  iter_ = state.iter();
  current_step_ = state.current_step();
  // The step indexes stepvalue (multistep) or plateau_winsize (plateau).
  const int steps = param_.lr_policy() == "plateau"     ? param_.plateau_winsize_size()
                    : param_.lr_policy() == "multistep" ? param_.stepvalue_size()
                                                        : INT_MAX;
  CREMA_REQUIRE(current_step_ >= 0 && current_step_ <= steps,
                state_file << ": current_step " << current_step_ << " does not fit lr_policy "
                           << param_.lr_policy()
                           << (steps == INT_MAX ? std::string(" (it must not be negative)")
                                                : " and its " + std::to_string(steps) + " steps"));
  // A state without them (Caffe's, or another policy's) starts the plateau
  // watch afresh, as the forks' PreSolve does.
  minimum_loss_ =
      state.has_minimum_loss() ? state.minimum_loss() : std::numeric_limits<float>::max();
  iter_last_event_ = state.iter_last_event();
  if (HoldsLayerPositions(state)) {
    // Rebuild the nets exactly as the constructor did (same seed, same
    // draws), their data layers starting where the saved run stood.
    LOG(INFO) << "Rebuilding the nets to resume their data layers";
    net_.reset();
    test_nets_.clear();
    resume_state_.reset(new SolverState(state));
    resume_state_->clear_history();  // the nets need the positions only
    BuildNets();
  }
  if (state.has_learned_net()) {
    // A relative learned_net is looked for beside the state file first.
    std::string model = state.learned_net();
    const size_t slash = state_file.rfind('/');
    if (!FileExists(model) && model.find('/') != 0 && slash != std::string::npos) {
      const std::string beside =
          state_file.substr(0, slash + 1) + model.substr(model.rfind('/') + 1);
      if (FileExists(beside)) model = beside;
    }
    net_->CopyTrainedLayersFrom(model);
  }
  RestoreSolverState(state);
  if (ema_) ema_->FromState(state, net_->learnable_params(), state_file);
  has_best_ = state.has_best_value();
  best_value_ = state.best_value();
  best_iter_ = state.best_iter();
  tests_since_best_ = state.tests_since_best();
  if (state.has_rng_state()) Context::rng().SetState(state.rng_state());
}

template <typename Dtype>
void Solver<Dtype>::CopyStateFrom(const Solver& other) {
  iter_ = other.iter_;
  current_step_ = other.current_step_;
  minimum_loss_ = other.minimum_loss_;
  iter_last_event_ = other.iter_last_event_;
  const auto& mine = net_->learnable_params();
  const auto& theirs = other.net_->learnable_params();
  CHECK_EQ(mine.size(), theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) mine[i]->CopyFrom(*theirs[i]);
  CopyHistoryFrom(other);
}

INSTANTIATE_CLASS(Solver);

}  // namespace crema
