// Solvers: learning-rate policies by hand, each update rule's first steps
// against its formula, iter_size accumulation, and snapshot + restore
// continuing exactly where training left off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/ema_weights.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "linear_solver.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

// The gradient of the linear unit's loss at w.
std::vector<double> Gradient(const std::vector<double>& w) {
  const double x[2] = {1.0, -2.0};
  const double residual = w[0] * x[0] + w[1] * x[1] - 3.0;
  return {residual * x[0], residual * x[1]};
}

TEST(SolverTest, LearningRatePolicies) {
  struct Case {
    std::string policy;
    int iter;
    double expected;
  };
  // base 0.1, gamma 0.5, power 2, stepsize 3, stepvalues 2 and 5, max_iter 10.
  const std::vector<Case> cases = {
      {"fixed", 7, 0.1},
      {"step", 7, 0.1 * 0.25},
      {"exp", 3, 0.1 * 0.125},
      {"inv", 2, 0.1 * std::pow(1 + 0.5 * 2, -2.0)},
      {"poly", 5, 0.1 * std::pow(0.5, 2.0)},
      {"sigmoid", 3, 0.1 * 0.5},
      {"multistep", 6, 0.1 * 0.25},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.policy);
    SolverParameter param = LinearSolver("SGD",
                                         "gamma: 0.5 power: 2 stepsize: 3 "
                                         "stepvalue: 2 stepvalue: 5");
    param.set_lr_policy(c.policy);
    param.set_max_iter(10);
    SGDSolver<double> solver(param);
    SetInputs(solver.net().get());
    solver.Step(c.iter);
    // The schema holds rates as float: agree to float precision.
    EXPECT_NEAR(solver.GetLearningRate(), c.expected, 1e-8);
  }
  // An unknown policy is refused when the solver is made
  // (SettingsWithoutMeaningAreErrors).
  SolverParameter bad = LinearSolver("SGD");
  bad.set_lr_policy("cosine");
  EXPECT_THROW(SGDSolver<double>{bad}, Error);
}

// Each rule's first three steps against its formula written out here.
TEST(SolverTest, UpdateRulesFollowTheirFormulas) {
  const double rate = 0.1, momentum = 0.9, delta = 1e-8, rms = 0.98, beta2 = 0.999;
  for (const std::string type : {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"}) {
    SCOPED_TRACE(type);
    std::string extra = "delta: 1e-8 ";
    if (type == "SGD" || type == "Nesterov" || type == "AdaDelta" || type == "Adam") {
      extra += "momentum: 0.9 ";
    }
    if (type == "RMSProp") extra += "rms_decay: 0.98 ";
    auto solver = CreateSolver<double>(LinearSolver(type, extra));
    SetInputs(solver->net().get());
    std::vector<double> w = {0.5, 0.5}, h1 = {0, 0}, h2 = {0, 0};
    for (int t = 0; t < 3; ++t) {
      const std::vector<double> g = Gradient(w);
      for (int i = 0; i < 2; ++i) {
        double step = 0;
        if (type == "SGD") {
          h1[i] = momentum * h1[i] + rate * g[i];
          step = h1[i];
        } else if (type == "Nesterov") {
          const double previous = h1[i];
          h1[i] = momentum * h1[i] + rate * g[i];
          step = (1 + momentum) * h1[i] - momentum * previous;
        } else if (type == "AdaGrad") {
          h1[i] += g[i] * g[i];
          step = rate * g[i] / (std::sqrt(h1[i]) + delta);
        } else if (type == "RMSProp") {
          h1[i] = rms * h1[i] + (1 - rms) * g[i] * g[i];
          step = rate * g[i] / (std::sqrt(h1[i]) + delta);
        } else if (type == "AdaDelta") {
          h1[i] = momentum * h1[i] + (1 - momentum) * g[i] * g[i];
          const double u = g[i] * std::sqrt(h2[i] + delta) / std::sqrt(h1[i] + delta);
          h2[i] = momentum * h2[i] + (1 - momentum) * u * u;
          step = rate * u;
        } else {  // Adam
          h1[i] = momentum * h1[i] + (1 - momentum) * g[i];
          h2[i] = beta2 * h2[i] + (1 - beta2) * g[i] * g[i];
          const double correction =
              std::sqrt(1 - std::pow(beta2, t + 1)) / (1 - std::pow(momentum, t + 1));
          step = rate * correction * h1[i] / (std::sqrt(h2[i]) + delta);
        }
        w[i] -= step;
      }
      solver->Step(1);
      const std::vector<double> got = LinearWeights(*solver);
      EXPECT_NEAR(got[0], w[0], 1e-6) << "step " << t;  // float-held rates
      EXPECT_NEAR(got[1], w[1], 1e-6) << "step " << t;
    }
  }
}

TEST(SolverTest, WeightDecayAndIterSize) {
  // L2 decay adds decay * w to the gradient; iter_size 2 averages two passes.
  auto solver = CreateSolver<double>(LinearSolver("SGD", "weight_decay: 0.01 iter_size: 2"));
  SetInputs(solver->net().get());
  const std::vector<double> g = Gradient({0.5, 0.5});
  solver->Step(1);
  const std::vector<double> got = LinearWeights(*solver);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(got[i], 0.5 - 0.1 * (g[i] + 0.01 * 0.5), 1e-7);
  auto clipped = CreateSolver<double>(LinearSolver("SGD", "clip_gradients: 0.5"));
  SetInputs(clipped->net().get());
  clipped->Step(1);
  const std::vector<double> w = LinearWeights(*clipped);
  const double moved = std::hypot(w[0] - 0.5, w[1] - 0.5);
  EXPECT_NEAR(moved, 0.1 * 0.5, 1e-7);  // the gradient's norm was clipped to 0.5
}

// The forks' layer-wise rates on the linear unit (one blob, w = (0.5, 0.5)),
// two momentum-SGD steps each, against their code: the blob's rate is
// rate * trust ratio in place of lr_mult, the gradient norm taken after the
// weight decay was added (their CPU bodies' order).
//   Intel's local_lr_auto: local_gw_ratio |w| / (|g| + weight_decay |w|)
//   NVCaffe's larc "scale": rate * larc_eta |w| / |g|;  "clip": min(rate, that)
TEST(SolverTest, ForkLayerWiseRatesFollowTheirCode) {
  const double rate = 0.1, momentum = 0.9, decay = 0.01, eta = 0.02;
  struct Case {
    std::string settings;
    int kind;  // 0 Intel, 1 NVCaffe scale, 2 NVCaffe clip
  };
  const Case cases[] = {
      {"local_lr_auto: true local_gw_ratio: 0.02", 0},
      {"larc: true larc_eta: 0.02", 1},
      {"larc: true larc_eta: 0.02 larc_policy: 'clip'", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.settings);
    auto solver =
        CreateSolver<double>(LinearSolver("SGD", "momentum: 0.9 weight_decay: 0.01 " + c.settings));
    SetInputs(solver->net().get());
    std::vector<double> w = {0.5, 0.5}, h = {0, 0};
    for (int t = 0; t < 2; ++t) {
      std::vector<double> g = Gradient(w);
      for (int i = 0; i < 2; ++i) g[i] += decay * w[i];
      const double wn = std::hypot(w[0], w[1]), gn = std::hypot(g[0], g[1]);
      double local = 0;
      if (c.kind == 0) local = rate * eta * wn / (gn + decay * wn);
      if (c.kind == 1) local = rate * eta * wn / gn;
      if (c.kind == 2) local = std::min(rate, eta * wn / gn);
      for (int i = 0; i < 2; ++i) {
        h[i] = momentum * h[i] + local * g[i];
        w[i] -= h[i];
      }
      solver->Step(1);
      const std::vector<double> got = LinearWeights(*solver);
      EXPECT_NEAR(got[0], w[0], 1e-7) << "step " << t;  // float-held settings
      EXPECT_NEAR(got[1], w[1], 1e-7) << "step " << t;
    }
  }
  // Adam has no layer-wise rate in either fork: refused by name.
  SolverParameter adam = LinearSolver("Adam", "larc: true");
  const std::string message = ErrorMessageOf([&] { CreateSolver<double>(adam); });
  EXPECT_NE(message.find("larc applies to SGD"), std::string::npos) << message;
  SolverParameter decoupled = LinearSolver("SGD", "regularization_type: 'decoupled'");
  EXPECT_NE(ErrorMessageOf([&] { CreateSolver<double>(decoupled); }).find("jolibrain"),
            std::string::npos);
}

// Decoupled weight decay on three weights: AdamW takes Adam's step from the
// gradient alone and shrinks w by rate * decay * w beside it; SGDW likewise
// after momentum SGD's step. (The coupled solvers add decay * w to the
// gradient instead, which Adam then normalizes away.)
TEST(SolverTest, DecoupledWeightDecayFollowsItsFormula) {
  const double rate = 0.1, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, decay = 0.05;
  const double x[3] = {1.0, -2.0, 0.5}, y = 3.0;
  for (const std::string type : {"AdamW", "SGDW"}) {
    SCOPED_TRACE(type);
    SolverParameter param;
    ReadProtoFromString(
        "base_lr: 0.1 lr_policy: 'fixed' max_iter: 10 display: 0 momentum: 0.9 "
        "delta: 1e-8 weight_decay: 0.05 snapshot_after_train: false type: '" +
            type + "'",
        "solver", &param);
    std::string net = kLinearNet;
    net.replace(net.find("dim: 1 dim: 2"), 13, "dim: 1 dim: 3");
    ReadProtoFromString(net, "net", param.mutable_net_param());
    auto solver = CreateSolver<double>(param);
    EXPECT_EQ(std::string(solver->type()), type);
    double* input = solver->net()->blob_by_name("x")->mutable_cpu_data();
    std::copy(x, x + 3, input);
    solver->net()->blob_by_name("y")->mutable_cpu_data()[0] = y;
    std::vector<double> w = {0.5, 0.5, 0.5}, m = {0, 0, 0}, v = {0, 0, 0};
    for (int t = 0; t < 3; ++t) {
      const double residual = w[0] * x[0] + w[1] * x[1] + w[2] * x[2] - y;
      for (int i = 0; i < 3; ++i) {
        const double g = residual * x[i];
        double step;
        if (type == "AdamW") {
          m[i] = beta1 * m[i] + (1 - beta1) * g;
          v[i] = beta2 * v[i] + (1 - beta2) * g * g;
          const double correction =
              std::sqrt(1 - std::pow(beta2, t + 1)) / (1 - std::pow(beta1, t + 1));
          step = rate * correction * m[i] / (std::sqrt(v[i]) + eps);
        } else {
          m[i] = beta1 * m[i] + rate * g;
          step = m[i];
        }
        w[i] -= step + rate * decay * w[i];
      }
      solver->Step(1);
      const Blob<double>* weights = solver->net()->learnable_params()[0];
      for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(weights->cpu_data()[i], w[i], 1e-6) << "step " << t << ", weight " << i;
      }
    }
  }
}

TEST(SolverTest, DecoupledDecayIsL2Only) {
  EXPECT_NE(ErrorMessageOf([] {
              CreateSolver<double>(LinearSolver("AdamW", "regularization_type: 'L1'"));
            }).find("type AdamW decays the weights in proportion to themselves (L2)"),
            std::string::npos);
}

// ema_decay: the moving average equals its formula over each step's
// weights, starting from the initial ones; training itself is unchanged;
// tests run with the average and give the training weights back; a snapshot
// writes it beside the weights, and a resumed run continues it bitwise.
SolverParameter EmaSolver(const std::string& dir) {
  SolverParameter param =
      LinearSolver("SGD",
                   "momentum: 0.9 ema_decay: 0.8 test_iter: 1 test_interval: 1000 "
                   "test_initialization: false snapshot_prefix: '" +
                       dir + "/ema'");
  ReadProtoFromString(kLinearNet, "net", param.add_test_net_param());
  return param;
}

// The test net's loss after TestAll, its inputs set as the training net's.
double TestLoss(Solver<double>* solver) {
  SetInputs(solver->test_nets()[0].get());
  solver->TestAll();
  return solver->test_nets()[0]->blob_by_name("loss")->cpu_data()[0];
}

TEST(SolverTest, WeightMovingAverageFollowsItsFormula) {
  char pattern[] = "/tmp/crema_ema_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  auto solver = CreateSolver<double>(EmaSolver(dir));
  SetInputs(solver->net().get());
  std::vector<double> ema = LinearWeights(*solver);  // the initial weights
  const double decay = 0.8f;                         // as the schema holds it
  for (int t = 0; t < 4; ++t) {
    solver->Step(1);
    const std::vector<double> w = LinearWeights(*solver);
    for (int i = 0; i < 2; ++i) ema[i] = decay * ema[i] + (1 - decay) * w[i];
  }
  auto plain = CreateSolver<double>(LinearSolver("SGD", "momentum: 0.9"));
  SetInputs(plain->net().get());
  plain->Step(4);
  const std::vector<double> raw = LinearWeights(*plain);
  EXPECT_EQ(LinearWeights(*solver), raw);  // training is unchanged
  const double residual = ema[0] * 1.0 + ema[1] * -2.0 - 3.0;
  EXPECT_NEAR(TestLoss(solver.get()), residual * residual / 2, 1e-12);  // tested with the average
  EXPECT_EQ(LinearWeights(*solver), raw);  // and the training weights are back
  solver->Snapshot();
  NetParameter average;
  ReadProtoFromBinaryFile(dir + "/ema_iter_4.ema.caffemodel", &average);
  ASSERT_EQ(average.layer(1).blobs(0).double_data_size(), 2);
  EXPECT_NEAR(average.layer(1).blobs(0).double_data(0), ema[0], 1e-12);
  EXPECT_NEAR(average.layer(1).blobs(0).double_data(1), ema[1], 1e-12);
  solver->Step(3);
  auto resumed = CreateSolver<double>(EmaSolver(dir));
  SetInputs(resumed->net().get());
  resumed->Restore(dir + "/ema_iter_4.solverstate");
  resumed->Step(3);
  EXPECT_EQ(LinearWeights(*resumed), LinearWeights(*solver));
  EXPECT_EQ(TestLoss(resumed.get()), TestLoss(solver.get()));  // bitwise
  std::system(("rm -rf " + dir).c_str());
}

// A BatchNorm average slower than 0.99 under ema_decay is advised against
// (the solver logs it as a warning), naming the first such layer; Caffe's
// default fraction is 0.999.
TEST(SolverTest, SlowBatchNormUnderEmaIsAdvisedAgainst) {
  LayerParameter slow, fast, scale;
  ReadProtoFromString("name: 'conv1_bn' type: 'BatchNorm'", "layer", &slow);
  ReadProtoFromString(
      "name: 'conv2_bn' type: 'BatchNorm' "
      "batch_norm_param { moving_average_fraction: 0.99 }",
      "layer", &fast);
  ReadProtoFromString("name: 'conv1_scale' type: 'Scale'", "layer", &scale);
  EXPECT_EQ(SlowBatchNormAdvice({&fast, &scale}), "");
  const std::string advice = SlowBatchNormAdvice({&fast, &slow, &scale, &slow});
  EXPECT_NE(advice.find("2 BatchNorm layer(s), first 'conv1_bn'"), std::string::npos) << advice;
  EXPECT_NE(advice.find("moving_average_fraction 0.999"), std::string::npos) << advice;
}

TEST(SolverTest, EmaDecayOutsideItsRangeIsRefused) {
  for (const char* bad : {"0", "1", "-0.5", "1.5", "nan"}) {
    EXPECT_NE(ErrorMessageOf([&] {
                CreateSolver<double>(LinearSolver("SGD", std::string("ema_decay: ") + bad));
              }).find("ema_decay is"),
              std::string::npos)
        << bad;
  }
}

// best_output and early_stop_patience on the linear unit, its prediction p
// moving from -0.5 halfway to 3 each step (1.25, 2.125, 2.5625, ...) while
// the test net's target is 2: the test loss (p - 2)^2 / 2 is lowest after 2
// steps and rises after, so the best snapshot is iteration 2's and three
// worse tests (3, 4, 5) stop the run at iteration 5.
SolverParameter BestSolver(const std::string& dir, const std::string& overrides = "") {
  SolverParameter param =
      LinearSolver("SGD",
                   "test_iter: 1 test_interval: 1 best_output: 'loss' best_mode: MIN "
                   "early_stop_patience: 3 snapshot_prefix: '" +
                       dir + "/run'");
  param.set_max_iter(20);
  ReadProtoFromString(kLinearNet, "net", param.add_test_net_param());
  SolverParameter changes;  // its settings replace the ones above
  ReadProtoFromString(overrides, "overrides", &changes);
  param.MergeFrom(changes);
  return param;
}

std::unique_ptr<Solver<double>> BestSolverWithInputs(const SolverParameter& param) {
  auto solver = CreateSolver<double>(param);
  SetInputs(solver->net().get());
  SetInputs(solver->test_nets()[0].get());
  solver->test_nets()[0]->blob_by_name("y")->mutable_cpu_data()[0] = 2.0;
  return solver;
}

SolverState ReadState(const std::string& path) {
  SolverState state;
  ReadProtoFromBinaryFile(path, &state);
  return state;
}

TEST(SolverTest, BestCheckpointAndEarlyStop) {
  char pattern[] = "/tmp/crema_best_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  auto two_steps = CreateSolver<double>(LinearSolver("SGD"));
  SetInputs(two_steps->net().get());
  two_steps->Step(2);
  auto solver = BestSolverWithInputs(BestSolver(dir));
  solver->Solve();
  EXPECT_EQ(solver->iter(), 5);  // tests 3, 4 and 5 were no better than 2's
  NetParameter best;
  ReadProtoFromBinaryFile(dir + "/run_best.caffemodel", &best);
  ASSERT_EQ(best.layer(1).blobs(0).double_data_size(), 2);
  EXPECT_EQ(best.layer(1).blobs(0).double_data(0), LinearWeights(*two_steps)[0]);
  EXPECT_EQ(best.layer(1).blobs(0).double_data(1), LinearWeights(*two_steps)[1]);
  const SolverState best_state = ReadState(dir + "/run_best.solverstate");
  EXPECT_EQ(best_state.iter(), 2);
  EXPECT_EQ(best_state.best_iter(), 2);
  EXPECT_NEAR(best_state.best_value(), (2.125 - 2) * (2.125 - 2) / 2, 1e-7);  // float base_lr
  EXPECT_TRUE(FileExists(dir + "/run_iter_5.caffemodel"));                    // the work is kept
  // Higher is better with MAX: the loss only rises after the first test.
  auto max = BestSolverWithInputs(BestSolver(dir, "best_mode: MAX early_stop_patience: 2"));
  max->Solve();
  EXPECT_EQ(max->iter(), 2);  // iteration 0's 3.125 stayed the highest
  std::system(("rm -rf " + dir).c_str());
}

TEST(SolverTest, AResumedRunKeepsTheBestSoFar) {
  char pattern[] = "/tmp/crema_best_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  // Snapshot after 4 updates: the best is iteration 2's, one worse test since.
  auto first = BestSolverWithInputs(BestSolver(dir, "max_iter: 4 snapshot_after_train: true"));
  first->Solve();
  const SolverState state = ReadState(dir + "/run_iter_4.solverstate");
  EXPECT_EQ(state.best_iter(), 2);
  EXPECT_EQ(state.tests_since_best(), 1);
  auto resumed = BestSolverWithInputs(BestSolver(dir));
  resumed->Solve(dir + "/run_iter_4.solverstate");
  EXPECT_EQ(resumed->iter(), 5);  // tests 4 and 5 complete the patience of 3
  EXPECT_EQ(ReadState(dir + "/run_best.solverstate").best_iter(), 2);  // not overwritten
  std::system(("rm -rf " + dir).c_str());
}

TEST(SolverTest, AWatchedOutputNoTestNetGivesIsRefused) {
  const std::string none =
      ErrorMessageOf([] { CreateSolver<double>(BestSolver("/tmp", "best_output: 'accuracy'")); });
  EXPECT_NE(none.find("best_output 'accuracy' is not a single-value output of any test net "
                      "(their outputs: loss)"),
            std::string::npos)
      << none;
  EXPECT_NE(ErrorMessageOf([] {
              CreateSolver<double>(LinearSolver("SGD", "early_stop_patience: 2"));
            }).find("early_stop_patience needs best_output"),
            std::string::npos);
  EXPECT_NE(ErrorMessageOf([] {
              CreateSolver<double>(BestSolver("/tmp", "early_stop_patience: -1"));
            }).find("early_stop_patience is -1"),
            std::string::npos);
}

TEST(SolverTest, UnknownTypeIsAUserError) {
  EXPECT_THROW(CreateSolver<double>(LinearSolver("Adamax")), Error);
}

// A parameter made in code with the deprecated solver_type enum (no file,
// so no ReadSolverParamsFromTextFile upgraded it) makes the solver it names.
TEST(SolverTest, DeprecatedSolverTypeInCodeMakesThatSolver) {
  SolverParameter param = LinearSolver("SGD");
  param.clear_type();
  param.set_solver_type(SolverParameter::ADAM);
  auto solver = CreateSolver<double>(param);
  EXPECT_STREQ(solver->type(), "Adam");
  EXPECT_EQ(solver->param().type(), "Adam");
  EXPECT_FALSE(solver->param().has_solver_type());
}

// A test_interval with no test to run used to train without a word about it.
TEST(SolverTest, TestIntervalWithoutTestIterIsAUserError) {
  const std::string missing =
      ErrorMessageOf([] { CreateSolver<double>(LinearSolver("SGD", "test_interval: 100")); });
  EXPECT_NE(missing.find("test_interval is 100 but test_iter is not given"), std::string::npos)
      << missing;
  EXPECT_NE(missing.find("net_param 'linear'"), std::string::npos) << missing;
  const std::string zero = ErrorMessageOf(
      [] { CreateSolver<double>(LinearSolver("SGD", "test_interval: 100 test_iter: 0")); });
  EXPECT_NE(zero.find("test_iter 0 is 0"), std::string::npos) << zero;
  const std::string states = ErrorMessageOf([] {
    CreateSolver<double>(LinearSolver(
        "SGD", "test_interval: 100 test_iter: 1 test_state { stage: 'a' } test_state { }"));
  });
  EXPECT_NE(states.find("test_state has 2 entries for 1 test nets"), std::string::npos) << states;
  CreateSolver<double>(LinearSolver("SGD", "test_interval: 100 test_iter: 1"));  // fine
}

// A snapshot folder that is missing (or not writable) used to be found out
// at the first snapshot, after the training it was meant to keep.
TEST(SolverTest, AMissingSnapshotFolderFailsBeforeTheFirstIteration) {
  auto solver = CreateSolver<double>(
      LinearSolver("SGD", "snapshot: 5 snapshot_prefix: '/tmp/crema_no_such_folder/run/lenet'"));
  const std::string message = ErrorMessageOf([&] { solver->Step(10); });
  EXPECT_NE(message.find("snapshot_prefix '/tmp/crema_no_such_folder/run/lenet'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the folder '/tmp/crema_no_such_folder/run' does not exist"),
            std::string::npos)
      << message;
  EXPECT_EQ(solver->iter(), 0);
  // Without snapshots due, the prefix is not looked at.
  auto unsnapshotted = CreateSolver<double>(
      LinearSolver("SGD", "snapshot_prefix: '/tmp/crema_no_such_folder/run/lenet'"));
  unsnapshotted->Step(2);
  EXPECT_EQ(unsnapshotted->iter(), 2);
}

// Settings that would train NaNs, nothing, or a wrong schedule without a
// word are refused by name when the solver is made.
TEST(SolverTest, SettingsWithoutMeaningAreErrors) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"base_lr: nan", "base_lr is nan"},
      {"base_lr: inf", "base_lr is inf"},
      {"base_lr: -0.1", "base_lr is -0.1; it must not be negative"},
      {"momentum: -0.9", "momentum is -0.9"},
      {"weight_decay: nan", "weight_decay is nan"},
      {"max_iter: -5", "max_iter is -5"},
      {"lr_policy: 'step' stepsize: 0", "lr_policy step needs a positive stepsize"},
      {"lr_policy: 'step' stepsize: 10 gamma: nan", "gamma is nan"},
      {"lr_policy: 'inv' gamma: 0.1 power: inf", "power is inf"},
      {"lr_policy: 'multistep' gamma: 0.1 stepvalue: 100 stepvalue: 50",
       "stepvalue 50 (entry 2) must be positive and above the one before"},
      {"lr_policy: 'multistep' gamma: 0.1 stepvalue: 0", "stepvalue 0 (entry 1)"},
      {"lr_policy: 'cosine'", "unknown lr_policy 'cosine'"},
  };
  for (const auto& [extra, expected] : cases) {
    // The case's fields replace LinearSolver's own (base_lr, lr_policy, max_iter).
    SolverParameter param = LinearSolver("SGD"), changes;
    ReadProtoFromString(extra, "case", &changes);
    param.MergeFrom(changes);
    const std::string message = ErrorMessageOf([&] { CreateSolver<double>(param); });
    EXPECT_NE(message.find(expected), std::string::npos) << extra << ": " << message;
  }
  SolverParameter fine = LinearSolver("SGD");
  fine.set_lr_policy("multistep");
  fine.add_stepvalue(5);
  fine.add_stepvalue(8);
  CreateSolver<double>(fine);
}

// A net that would train nothing is refused, unless asked for or max_iter
// is 0 (the way to write a net's initial weights).
TEST(SolverTest, ATrainingNetWithoutLossIsAnErrorUnlessAllowed) {
  const char* no_loss =
      "name: 'features'"
      "layer { name: 'input' type: 'Input' top: 'x' input_param { shape { dim: 1 dim: 2 } } }"
      "layer { name: 'fc' type: 'InnerProduct' bottom: 'x' top: 'p'"
      "  inner_product_param { num_output: 1 } }";
  SolverParameter param = LinearSolver("SGD");
  param.clear_net_param();
  ReadProtoFromString(no_loss, "net", param.mutable_net_param());
  EXPECT_EQ(ErrorMessageOf([&] { CreateSolver<double>(param); }),
            "solver: train net: the training net 'features' has no loss (no output with a loss "
            "weight), so training would change nothing; add a loss layer, or set allow_no_loss: "
            "true in the solver");
  param.set_allow_no_loss(true);
  EXPECT_EQ(ErrorMessageOf([&] { CreateSolver<double>(param); }), "");
  param.set_allow_no_loss(false);
  param.set_max_iter(0);
  EXPECT_EQ(ErrorMessageOf([&] { CreateSolver<double>(param); }), "");
}

// SSD's solver fields: their values are checked, and eval_type detection
// needs a DetectionEvaluate output in every test net.
TEST(SolverTest, SsdEvaluationSettingsAreChecked) {
  SolverParameter param = LinearSolver("SGD", "ap_version: '12point'");
  EXPECT_EQ(ErrorMessageOf([&] { CreateSolver<double>(param); }),
            "solver: unknown ap_version '12point' (11point, MaxIntegral, Integral)");
  param = LinearSolver("SGD", "eval_type: 'segmentation'");
  EXPECT_EQ(ErrorMessageOf([&] { CreateSolver<double>(param); }),
            "solver: unknown eval_type 'segmentation' (classification, detection)");
  param = LinearSolver("SGD",
                       "eval_type: 'detection' ap_version: '11point' "
                       "show_per_class_result: true test_iter: 1 test_interval: 10");
  EXPECT_EQ(ErrorMessageOf([&] { CreateSolver<double>(param); }),
            "solver: test net #0: eval_type is detection, but the test net has no "
            "DetectionEvaluate output to compute mean average precision from");
}

// The linear unit's net with a layer between the unit and the loss.
SolverParameter LinearSolverThrough(const std::string& layer, const std::string& extra = "") {
  SolverParameter param = LinearSolver("SGD", extra);
  std::string net = kLinearNet;
  const std::string loss_inputs = "bottom: 'p' bottom: 'y'";
  net.replace(net.find(loss_inputs), loss_inputs.size(), "bottom: 'q' bottom: 'y'");
  net.insert(net.find("layer { name: 'loss'"), layer);
  ReadProtoFromString(net, "net", param.mutable_net_param());
  return param;
}

TEST(SolverTest, NaNInTheDataStopsTheRunNamingTheIterationAndTheInput) {
  auto solver = CreateSolver<double>(LinearSolver("SGD"));
  SetInputs(solver->net().get());
  solver->Step(2);
  const std::vector<double> before = LinearWeights(*solver);
  solver->net()->blob_by_name("x")->mutable_cpu_data()[1] = std::nan("");
  EXPECT_EQ(ErrorMessageOf([&] { solver->Step(1); }),
            "iteration 2: the loss is nan; the input layer 'input' (Input) gives non-finite "
            "values in 'x': NaN or infinity in the data; training stopped before this update, so "
            "the weights and the last snapshot hold no NaN (on_nonfinite: WARN trains on, as Caffe "
            "does)");
  EXPECT_EQ(LinearWeights(*solver), before);
}

// The first two clauses of the error one step gives with `layer` between
// the linear unit (its weights 0, so p = 0) and the loss.
std::string StepErrorThrough(const std::string& layer) {
  SolverParameter param = LinearSolverThrough(layer);
  param.mutable_net_param()
      ->mutable_layer(1)
      ->mutable_inner_product_param()
      ->mutable_weight_filler()
      ->set_value(0);
  auto solver = CreateSolver<double>(param);
  SetInputs(solver->net().get());
  const std::string message = ErrorMessageOf([&] { solver->Step(1); });
  return message.substr(0, message.find(';', message.find(';') + 1));
}

TEST(SolverTest, ANonFiniteOutputIsTracedToTheFirstLayerThatMadeIt) {
  // log(0) = -inf.
  EXPECT_EQ(StepErrorThrough("layer { name: 'log' type: 'Log' bottom: 'p' top: 'q' }"),
            "iteration 0: the loss is inf; the first layer whose output is not finite is 'log' "
            "(Log), top 'q'");
}

TEST(SolverTest, ANonFiniteGradientIsTracedInBackwardOrder) {
  // sqrt(p) at p = 0 is 0, a finite loss, but its derivative is infinite.
  EXPECT_EQ(StepErrorThrough("layer { name: 'root' type: 'Power' bottom: 'p' top: 'q' "
                             "power_param { power: 0.5 } }"),
            "iteration 0: the gradient is not finite; the first layer (in backward order) whose "
            "input gradient is not finite is 'root' (Power)");
}

TEST(SolverTest, OnNonFiniteWarnTrainsOnAsCaffeDoes) {
  auto solver = CreateSolver<double>(LinearSolver("SGD", "on_nonfinite: WARN"));
  SetInputs(solver->net().get());
  solver->net()->blob_by_name("x")->mutable_cpu_data()[1] = std::nan("");
  solver->Step(3);
  EXPECT_EQ(solver->iter(), 3);
  EXPECT_TRUE(std::isnan(LinearWeights(*solver)[1]));
}

// The gradient watch on the device: a kernel per gradient raises one flag
// there. A finite run trains on; an infinite gradient stops it as on the CPU.
using SolverGpuTest = GpuTest;

TEST_F(SolverGpuTest, TheGradientWatchRunsOnTheDevice) {
  auto solver = CreateSolver<double>(LinearSolver("SGD"));
  SetInputs(solver->net().get());
  EXPECT_EQ(ErrorMessageOf([&] { solver->Step(2); }), "");
  EXPECT_EQ(solver->iter(), 2);
  EXPECT_EQ(StepErrorThrough("layer { name: 'root' type: 'Power' bottom: 'p' top: 'q' "
                             "power_param { power: 0.5 } }"),
            "iteration 0: the gradient is not finite; the first layer (in backward order) whose "
            "input gradient is not finite is 'root' (Power)");
}

TEST(SolverTest, SnapshotAndRestoreContinueExactly) {
  char pattern[] = "/tmp/crema_solver_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  for (const std::string type : {"SGD", "Adam"}) {
    SCOPED_TRACE(type);
    SolverParameter param =
        LinearSolver(type, "momentum: 0.9 snapshot_prefix: '" + dir + "/" + type + "'");
    auto original = CreateSolver<double>(param);
    SetInputs(original->net().get());
    original->Step(3);
    original->Snapshot();
    original->Step(2);
    auto resumed = CreateSolver<double>(param);
    SetInputs(resumed->net().get());
    resumed->Restore(dir + "/" + type + "_iter_3.solverstate");
    EXPECT_EQ(resumed->iter(), 3);
    resumed->Step(2);
    // Bitwise: same history, same steps.
    EXPECT_EQ(LinearWeights(*resumed), LinearWeights(*original));
  }
  std::system(("rm -rf " + dir).c_str());
}

// The plateau policy in a run: a rate that makes the linear unit's loss grow
// leaves the minimum at iteration 0, so the steps come at 2 and 5 (windows
// 2 and 3); a run resumed from iteration 3 has the minimum and the last
// event from its state and continues bitwise. Several solvers, each with its
// own loss, are refused.
TEST(SolverTest, PlateauStepsFollowTheLossAndResumeExactly) {
  char pattern[] = "/tmp/crema_solver_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  SolverParameter param = LinearSolver("SGD", "snapshot_prefix: '" + dir + "/plateau'");
  param.set_base_lr(1);
  param.set_lr_policy("plateau");
  param.set_gamma(0.5);
  param.add_plateau_winsize(2);
  param.add_plateau_winsize(3);
  SGDSolver<double> original(param);
  SetInputs(original.net().get());
  original.Step(3);
  EXPECT_NEAR(original.GetLearningRate(), 0.5, 1e-12);
  original.Snapshot();
  original.Step(3);
  EXPECT_NEAR(original.GetLearningRate(), 0.25, 1e-12);
  SGDSolver<double> resumed(param);
  SetInputs(resumed.net().get());
  resumed.Restore(dir + "/plateau_iter_3.solverstate");
  resumed.Step(3);
  EXPECT_NEAR(resumed.GetLearningRate(), 0.25, 1e-12);
  EXPECT_EQ(LinearWeights(resumed), LinearWeights(original));
  // A state whose step indexes past the windows (or below them) is refused,
  // naming the file, before the step is used.
  SolverState state;
  ReadProtoFromBinaryFile(dir + "/plateau_iter_3.solverstate", &state);
  state.set_current_step(3);
  WriteProtoToBinaryFile(state, dir + "/bad.solverstate");
  SGDSolver<double> refused(param);
  const std::string bad = ErrorMessageOf([&] { refused.Restore(dir + "/bad.solverstate"); });
  EXPECT_NE(bad.find("bad.solverstate: current_step 3 does not fit lr_policy plateau and its 2 "
                     "steps"),
            std::string::npos)
      << bad;
  // So is a negative iteration.
  state.set_current_step(1);
  state.set_iter(-5);
  WriteProtoToBinaryFile(state, dir + "/negative.solverstate");
  const std::string negative =
      ErrorMessageOf([&] { refused.Restore(dir + "/negative.solverstate"); });
  EXPECT_NE(negative.find("negative.solverstate: iter -5 is negative"), std::string::npos)
      << negative;
  std::system(("rm -rf " + dir).c_str());
  Context::set_solver_count(2);
  const std::string message = ErrorMessageOf([&] { SGDSolver<double> shared(param); });
  Context::set_solver_count(1);
  EXPECT_NE(message.find("lr_policy plateau follows one solver's loss"), std::string::npos)
      << message;
}

// A state resumes only into the solver type that wrote it, and a weights
// file given as the state says what it is.
TEST(SolverTest, ResumingWithAnotherTypeOrFromWeightsIsAnError) {
  char pattern[] = "/tmp/crema_solver_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  auto adam = CreateSolver<double>(LinearSolver("Adam", "snapshot_prefix: '" + dir + "/run'"));
  SetInputs(adam->net().get());
  adam->Step(2);
  adam->Snapshot();
  auto sgd = CreateSolver<double>(LinearSolver("SGD", "momentum: 0.9"));
  const std::string other = ErrorMessageOf([&] { sgd->Restore(dir + "/run_iter_2.solverstate"); });
  EXPECT_NE(other.find("run_iter_2.solverstate: written by the Adam solver, and this run's "
                       "solver is SGD"),
            std::string::npos)
      << other;
  const std::string weights = ErrorMessageOf([&] { sgd->Restore(dir + "/run_iter_2.caffemodel"); });
  EXPECT_NE(weights.find("run_iter_2.caffemodel: a weights file, not a solver state"),
            std::string::npos)
      << weights;
  auto again = CreateSolver<double>(LinearSolver("Adam"));
  again->Restore(dir + "/run_iter_2.solverstate");  // its own type: fine
  EXPECT_EQ(again->iter(), 2);
  std::system(("rm -rf " + dir).c_str());
}

TEST(SolverTest, RestoresBvlcLeNetStateAtIteration5000) {
  CREMA_REQUIRE_COMPAT();
  // BVLC Caffe's own snapshot: SGD momentum history of LeNet at 5,000.
  SolverParameter param;
  ReadProtoFromTextFile(CompatDir() + "/lenet_fashion/lenet_solver.prototxt", &param);
  NetParameter net;
  ReadProtoFromTextFile(CompatDir() + "/lenet_fashion/lenet_train_test.prototxt", &net);
  // Feed it from memory: this test is about the state, not the data.
  for (auto& layer : *net.mutable_layer()) {
    if (layer.type() != "Data") continue;
    const int batch = static_cast<int>(layer.data_param().batch_size());
    layer.set_type("DummyData");
    layer.clear_data_param();
    layer.clear_transform_param();
    DummyDataParameter* dummy = layer.mutable_dummy_data_param();
    BlobShape* data = dummy->add_shape();
    for (int d : {batch, 1, 28, 28}) data->add_dim(d);
    dummy->add_shape()->add_dim(batch);
  }
  param.clear_net();
  param.mutable_net_param()->CopyFrom(net);
  param.set_snapshot_prefix("/tmp/crema_never_written");
  SGDSolver<float> solver(param);
  solver.Restore(CompatDir() + "/lenet_fashion/lenet_fashion_iter_5000.solverstate");
  EXPECT_EQ(solver.iter(), 5000);
  ASSERT_EQ(solver.history().size(), 8u);  // 4 layers x (weights, bias)
  EXPECT_GT(solver.history()[0]->asum_data(), 0.f);
  NetParameter trained;
  ReadProtoFromBinaryFile(CompatDir() + "/lenet_fashion/lenet_fashion_iter_5000.caffemodel",
                          &trained);
  const Blob<float>* conv1 = solver.net()->learnable_params()[0];
  EXPECT_EQ(conv1->cpu_data()[0], trained.layer(1).blobs(0).data(0));
  EXPECT_NEAR(solver.GetLearningRate(), 0.01 * std::pow(1 + 0.0001 * 5000, -0.75), 1e-9);
}

}  // namespace
}  // namespace crema
