// The learning-rate schedule: each policy's rate at chosen iterations against
// its formula worked out here, the warm-up in front of any policy, and the
// settings that are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "crema/lr_schedule.hpp"
#include "crema/util/io.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

const double kPi = 3.14159265358979323846;

// The settings are held as float: a rate agrees with its formula to float's
// relative precision.
#define EXPECT_RATE(got, expected) EXPECT_NEAR(got, expected, 1e-7 * std::abs(expected) + 1e-15)

SolverParameter Schedule(const std::string& text) {
  SolverParameter param;
  ReadProtoFromString("max_iter: 1000 " + text, "solver", &param);
  RequireScheduleMeaningful(param);
  return param;
}

// Intel Caffe's warm-up (its sgd_solver.cpp): linear from warmup_start_lr at
// 0 to base_lr at warmup_iter, in place of the policy, which then goes on
// from the iteration reached.
TEST(LrScheduleTest, LinearWarmupRampsToBaseLrAndThePolicyTakesOverWhereItIs) {
  const SolverParameter fixed =
      Schedule("base_lr: 0.1 lr_policy: 'fixed' warmup_iter: 100 warmup_start_lr: 0.01");
  EXPECT_RATE(LearningRate(fixed, 0), 0.01);
  EXPECT_RATE(LearningRate(fixed, 50), 0.055);  // halfway from 0.01 to 0.1
  EXPECT_RATE(LearningRate(fixed, 100), 0.1);
  EXPECT_RATE(LearningRate(fixed, 700), 0.1);
  // A step policy whose first steps fall inside the warm-up: the ramp goes
  // to base_lr, and at 100 the policy's own rate, 0.1 * 0.5^2, takes over.
  const SolverParameter step =
      Schedule("base_lr: 0.1 lr_policy: 'step' stepsize: 40 gamma: 0.5 warmup_iter: 100");
  EXPECT_RATE(LearningRate(step, 0), 0);
  EXPECT_RATE(LearningRate(step, 25), 0.025);
  EXPECT_RATE(LearningRate(step, 99), 0.099);
  EXPECT_RATE(LearningRate(step, 100), 0.1 * 0.25);
  EXPECT_RATE(LearningRate(step, 120), 0.1 * 0.125);
}

TEST(LrScheduleTest, ExponentialWarmupIsGeometric) {
  const SolverParameter param = Schedule(
      "base_lr: 0.1 lr_policy: 'fixed' warmup_iter: 100 warmup_start_lr: 0.001 "
      "warmup_policy: 'exponential'");
  EXPECT_RATE(LearningRate(param, 0), 0.001);
  EXPECT_RATE(LearningRate(param, 50), 0.01);  // sqrt(0.001 * 0.1)
  EXPECT_RATE(LearningRate(param, 25), 0.001 * std::pow(100.0, 0.25));
  EXPECT_RATE(LearningRate(param, 100), 0.1);
}

TEST(LrScheduleTest, SgdrRestartsLongerAndLower) {
  // Cycles of 100, 200, 400 iterations from peaks 1, 0.5, 0.25 down to 0.1.
  const SolverParameter param =
      Schedule("base_lr: 1 lr_policy: 'sgdr' period: 100 p_mult: 2 lr_mult: 0.5 min_lr: 0.1");
  const auto cosine = [](double peak, double t) {
    return 0.1 + (peak - 0.1) * (1 + std::cos(kPi * t)) / 2;
  };
  EXPECT_RATE(LearningRate(param, 0), 1);
  EXPECT_RATE(LearningRate(param, 50), 0.55);
  EXPECT_RATE(LearningRate(param, 99), cosine(1, 0.99));
  EXPECT_RATE(LearningRate(param, 100), 0.5);  // the first restart
  EXPECT_RATE(LearningRate(param, 200), 0.3);  // halfway through the second
  EXPECT_RATE(LearningRate(param, 300), 0.25);
  EXPECT_RATE(LearningRate(param, 400), cosine(0.25, 0.25));
}

TEST(LrScheduleTest, SgdrEqualCyclesAndPlainCosine) {
  const SolverParameter equal = Schedule("base_lr: 0.2 lr_policy: 'sgdr' period: 100");
  EXPECT_RATE(LearningRate(equal, 250), 0.1);  // halfway through the third cycle
  EXPECT_RATE(LearningRate(equal, 300), 0.2);
  // No period: one cosine over max_iter.
  const SolverParameter plain = Schedule("base_lr: 0.2 lr_policy: 'sgdr'");
  EXPECT_RATE(LearningRate(plain, 0), 0.2);
  EXPECT_RATE(LearningRate(plain, 250), 0.1 * (1 + std::cos(kPi / 4)));
  EXPECT_RATE(LearningRate(plain, 999), 0.1 * (1 + std::cos(kPi * 0.999)));  // the last update
}

TEST(LrScheduleTest, OneCycleRisesThenFalls) {
  // Rise over 300 iterations from 0.1 / 25 to 0.1, then fall to 0.001.
  const SolverParameter param = Schedule("base_lr: 0.1 lr_policy: 'onecycle' min_lr: 0.001");
  EXPECT_RATE(LearningRate(param, 0), 0.004);
  EXPECT_RATE(LearningRate(param, 150), 0.052);
  EXPECT_RATE(LearningRate(param, 300), 0.1);
  EXPECT_RATE(LearningRate(param, 650), 0.0505);
  EXPECT_RATE(LearningRate(param, 1000), 0.001);
  const SolverParameter early =
      Schedule("base_lr: 1 lr_policy: 'onecycle' onecycle_pct_start: 0.5 onecycle_div_factor: 10");
  EXPECT_RATE(LearningRate(early, 250), 0.55);
  EXPECT_RATE(LearningRate(early, 750), 0.5);
}

TEST(LrScheduleTest, CaffePoliciesAreUnchanged) {
  EXPECT_RATE(
      LearningRate(Schedule("base_lr: 0.01 lr_policy: 'inv' gamma: 0.0001 power: 0.75"), 1000),
      0.01 * std::pow(1.1, -0.75));
  const SolverParameter multistep =
      Schedule("base_lr: 1 lr_policy: 'multistep' gamma: 0.1 stepvalue: 100 stepvalue: 300");
  EXPECT_RATE(LearningRate(multistep, 99), 1);
  EXPECT_RATE(LearningRate(multistep, 100), 0.1);
  EXPECT_RATE(LearningRate(multistep, 300), 0.01);
  EXPECT_RATE(LearningRate(Schedule("base_lr: 1 lr_policy: 'poly' power: 2"), 500), 0.25);
}

TEST(LrScheduleTest, TheLogLineNamesTheScheduleAndItsRates) {
  const std::string line = DescribeSchedule(Schedule(
      "base_lr: 0.1 lr_policy: 'sgdr' period: 500 warmup_iter: 100 warmup_start_lr: 0.01"));
  EXPECT_NE(line.find("lr_policy sgdr from base_lr 0.1 (period 500, p_mult 1"), std::string::npos)
      << line;
  EXPECT_NE(line.find("after a linear warm-up of 100 iterations from 0.01"), std::string::npos)
      << line;
  EXPECT_NE(line.find("lr at 0: 0.01, 100: "), std::string::npos) << line;
  EXPECT_NE(line.find("500: 0.1"), std::string::npos) << line;  // the restart
}

TEST(LrScheduleTest, TheLogLineMarksTheQuartersOfTheLargestMaxIter) {
  SolverParameter param;
  ReadProtoFromString("base_lr: 0.1 lr_policy: 'poly' power: 1 max_iter: 2147483647", "solver",
                      &param);
  RequireScheduleMeaningful(param);
  const std::string line = DescribeSchedule(param);
  // Three quarters of 2^31 - 1, rounded down: the rate there is a quarter of base_lr.
  EXPECT_NE(line.find(", 1610612735: 0.025"), std::string::npos) << line;
  EXPECT_NE(line.find(", 2147483647: 0"), std::string::npos) << line;
}

std::string Refusal(const std::string& text) {
  return ErrorMessageOf([&] { Schedule(text); });
}

TEST(LrScheduleTest, MeaninglessSettingsAreRefusedByName) {
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'fixed' warmup_iter: 2000")
                .find("warmup_iter 2000 is longer than max_iter 1000"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'sgdr' period: 0").find("period is 0"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'sgdr' period: -5").find("period is -5"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'sgdr' p_mult: 0.5").find("p_mult is 0.5"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'sgdr' lr_mult: 0").find("lr_mult is 0"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'sgdr' min_lr: 0.2").find("min_lr is 0.2"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'onecycle' onecycle_pct_start: 1")
                .find("onecycle_pct_start is 1"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'onecycle' onecycle_div_factor: 0.5")
                .find("onecycle_div_factor is 0.5"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'fixed' warmup_iter: 10 warmup_policy: 'cubic'")
                .find("unknown warmup_policy 'cubic' (linear, exponential)"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'fixed' warmup_iter: 10 "
                    "warmup_policy: 'exponential'")
                .find("warmup_start_lr, which must then be positive"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'cosine'").find("unknown lr_policy 'cosine'"),
            std::string::npos);
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'fixed' warmup_iter: -1").find("warmup_iter is -1"),
            std::string::npos);
}

// ---- The forks' solver files, their rates against the forks' own code ----
// The expected values are the forks' formulas worked in float, as their
// GetLearningRate computes (Crema computes in double: agreement to float's
// precision).
#define EXPECT_FORK_RATE(got, expected) \
  EXPECT_NEAR(got, expected, 2e-7 * std::abs(expected) + 1e-12)

// A solver file's text as a fork user writes it (its own max_iter).
SolverParameter SolverFile(const std::string& text) {
  SolverParameter param;
  ReadProtoFromString(text, "solver", &param);
  RequireScheduleMeaningful(param);
  return param;
}

// NVCaffe 0.17 (sgd_solver.cpp): while iter < rampup_interval the rate is
// rampup_lr + (base_lr - rampup_lr) * (iter / rampup_interval)^2 in place of
// the policy; poly falls to min_lr as (base_lr - min_lr) (1 - iter /
// max_iter)^power + min_lr; every rate is floored at min_lr.
TEST(ForkSchedulesTest, NvcaffeRampupPolyAndMinLrAsItsCode) {
  const SolverParameter poly = SolverFile(
      "max_iter: 20 base_lr: 0.1 lr_policy: 'poly' power: 2 min_lr: 0.001 rampup_interval: 5 "
      "rampup_lr: 0.01 solver_data_type: FLOAT16");
  const int iters[] = {0, 1, 2, 3, 4, 5, 6, 10, 15, 19, 20};
  const double nvcaffe[] = {0.01,      0.0136,    0.0244,    0.0424,    0.0676, 0.0566875,
                            0.0495100, 0.0257500, 0.0071875, 0.0012475, 0.001};
  for (int i = 0; i < 11; ++i) EXPECT_FORK_RATE(LearningRate(poly, iters[i]), nvcaffe[i]) << i;
  // step after a ramp from 0 (no rampup_lr): 0, 0.004, 0.1, 0.324, then the steps.
  const SolverParameter step = SolverFile(
      "max_iter: 90 base_lr: 0.4 lr_policy: 'step' gamma: 0.1 stepsize: 30 rampup_interval: 10");
  const int step_iters[] = {0, 1, 5, 9, 10, 29, 30, 60, 89};
  const double step_rates[] = {0, 0.004, 0.1, 0.324, 0.4, 0.4, 0.04, 0.004, 0.004};
  for (int i = 0; i < 9; ++i) {
    EXPECT_FORK_RATE(LearningRate(step, step_iters[i]), step_rates[i]) << step_iters[i];
  }
  // The floor holds under the ramp-up too.
  const SolverParameter floored =
      SolverFile("max_iter: 10 base_lr: 0.1 lr_policy: 'fixed' rampup_interval: 4 min_lr: 0.005");
  const double floored_rates[] = {0.005, 0.00625, 0.025, 0.05625, 0.1};
  for (int i = 0; i < 5; ++i) EXPECT_FORK_RATE(LearningRate(floored, i), floored_rates[i]) << i;
}

// Intel Caffe: warmup_iter / warmup_start_lr before a step policy, and its
// "multifixed" policy (stagelr at each stage up to and including its
// stageiter, base_lr unused).
TEST(ForkSchedulesTest, IntelWarmupAndMultifixedAsItsCode) {
  const SolverParameter warm = SolverFile(
      "max_iter: 30 base_lr: 0.1 lr_policy: 'step' gamma: 0.1 stepsize: 10 warmup_iter: 5 "
      "warmup_start_lr: 0.01 engine: 'MKLDNN'");
  const int iters[] = {0, 1, 2, 3, 4, 5, 9, 10, 29};
  const double intel[] = {0.01, 0.028, 0.046, 0.064, 0.082, 0.1, 0.1, 0.01, 0.001};
  for (int i = 0; i < 9; ++i) EXPECT_FORK_RATE(LearningRate(warm, iters[i]), intel[i]) << i;
  const SolverParameter stages = SolverFile(
      "max_iter: 40000 base_lr: 0.5 lr_policy: 'multifixed' stagelr: 0.001 stagelr: 0.01 "
      "stagelr: 0.001 stagelr: 0.0001 stageiter: 520 stageiter: 16000 stageiter: 24000 "
      "stageiter: 32000");
  const int stage_iters[] = {0, 520, 521, 16000, 16001, 24001, 40000};
  const double stage_rates[] = {0.001, 0.001, 0.01, 0.01, 0.001, 0.0001, 0.0001};
  for (int i = 0; i < 7; ++i) {
    EXPECT_FORK_RATE(LearningRate(stages, stage_iters[i]), stage_rates[i]) << stage_iters[i];
  }
}

// jolibrain's warm-up is Intel's (its pull request 50 says so, with Intel's
// field names) and its sgdr is beniz/caffe's (cosine from base_lr *
// lr_mult^k to min_lr over cycles of period * p_mult^k, restarting where a
// cycle ends): during the warm-up the rate goes linearly to base_lr, then
// sgdr at the iteration reached. Crema once ramped to sgdr's rate at the
// warm-up's end instead, which differed at every warm-up iteration but 0.
TEST(ForkSchedulesTest, JolibrainWarmupBeforeSgdrAsItsCode) {
  const SolverParameter sgdr = SolverFile(
      "max_iter: 30 base_lr: 0.01 lr_policy: 'sgdr' min_lr: 0.0001 period: 10 p_mult: 2 "
      "lr_mult: 0.5");
  const int iters[] = {0, 1, 2, 5, 9, 10, 11, 15, 20, 29, 30};
  const double beniz[] = {0.01,       0.00975773, 0.00905463, 0.00505,    0.00034227, 0.005,
                          0.00496984, 0.00428241, 0.00255,    0.00013016, 0.0025};
  for (int i = 0; i < 11; ++i) {
    EXPECT_NEAR(LearningRate(sgdr, iters[i]), beniz[i], 1e-8) << iters[i];
  }
  const SolverParameter warm = SolverFile(
      "max_iter: 30 base_lr: 0.01 lr_policy: 'sgdr' min_lr: 0.0001 period: 10 p_mult: 2 "
      "lr_mult: 0.5 warmup_iter: 5 warmup_start_lr: 0.001");
  const int warm_iters[] = {0, 1, 2, 4, 5, 6, 10, 30};
  // At 5 and 6 the cosine of the first cycle at 5/10 and 6/10.
  const double fork[] = {0.001,   0.0028,
                         0.0046,  0.0082,
                         0.00505, 0.0001 + 0.5 * (0.01 - 0.0001) * (1 + std::cos(0.6 * kPi)),
                         0.005,   0.0025};
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(LearningRate(warm, warm_iters[i]), fork[i], 2e-7) << warm_iters[i];
  }
}

// The plateau policy of R-FCN (Microsoft), NVCaffe, MobileNet-YOLO and Intel
// (their sgd_solver.cpp): after each iteration's smoothed loss, a new
// minimum is an event; a step (rate times gamma) comes where
// plateau_winsize[step] iterations have passed since the last event, and is
// an event too. The rates below follow the forks' code by hand for this
// loss sequence: steps at iteration 4 (0 + 3 after the minimum at 1) and 8
// (6 + 2 after the minimum at 6), none after the last window.
TEST(ForkSchedulesTest, PlateauStepsAsItsCode) {
  const SolverParameter plateau = SolverFile(
      "base_lr: 1 lr_policy: 'plateau' gamma: 0.1 plateau_winsize: 3 plateau_winsize: 2");
  const float losses[] = {5, 4, 4.5, 4.2, 4.1, 4.3, 3.9, 4, 4, 4, 4, 4, 4};
  const double rates[] = {1, 1, 1, 1, 0.1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01};
  PlateauState state;
  for (int iter = 0; iter < 13; ++iter) {
    AdvancePlateau(plateau, iter, losses[iter], &state);
    EXPECT_FORK_RATE(LearningRate(plateau, iter, state.step), rates[iter]) << iter;
  }
  EXPECT_EQ(state.minimum_loss, 3.9f);
  EXPECT_EQ(state.iter_last_event, 8);
  // With Intel's warm-up nothing moves before iteration 3: the minima at 3,
  // 4 and 6, then steps at 9 (6 + 3) and 11 (9 + 2).
  const SolverParameter warm = SolverFile(
      "max_iter: 13 base_lr: 1 lr_policy: 'plateau' gamma: 0.1 plateau_winsize: 3 "
      "plateau_winsize: 2 warmup_iter: 3 warmup_start_lr: 0.1");
  const double warm_rates[] = {0.1, 0.4, 0.7, 1, 1, 1, 1, 1, 1, 0.1, 0.1, 0.01, 0.01};
  PlateauState warm_state;
  for (int iter = 0; iter < 13; ++iter) {
    AdvancePlateau(warm, iter, losses[iter], &warm_state);
    EXPECT_FORK_RATE(LearningRate(warm, iter, warm_state.step), warm_rates[iter]) << iter;
  }
  EXPECT_NE(ErrorMessageOf([] {
              Schedule("base_lr: 1 lr_policy: 'plateau' gamma: 0.1");
            }).find("needs plateau_winsize"),
            std::string::npos);
  EXPECT_NE(ErrorMessageOf([] {
              Schedule("base_lr: 1 lr_policy: 'plateau' gamma: 0.1 plateau_winsize: 0");
            }).find("plateau_winsize 0 (entry 1)"),
            std::string::npos);
}

// What the forks' code refuses or would compute otherwise is one error by name.
TEST(ForkSchedulesTest, ForkSettingsOutOfRangeAreRefusedByName) {
  const auto message = [](const std::string& text) {
    return ErrorMessageOf([&] { Schedule(text); });
  };
  EXPECT_NE(message("base_lr: 0.1 lr_policy: 'fixed' rampup_interval: -1").find("rampup_interval"),
            std::string::npos);
  EXPECT_NE(
      message("base_lr: 0.1 lr_policy: 'fixed' rampup_interval: 5 warmup_iter: 5").find("give one"),
      std::string::npos);
  EXPECT_NE(message("base_lr: 0.1 lr_policy: 'multifixed' stagelr: 0.1").find("stageiter"),
            std::string::npos);
  EXPECT_NE(message("base_lr: 0.1 lr_policy: 'poly' power: 1 min_lr: 0.2").find("min_lr"),
            std::string::npos);
  EXPECT_NE(message("base_lr: 0.1 lr_policy: 'fixed' min_lr: -1").find("min_lr"),
            std::string::npos);
}

}  // namespace
}  // namespace crema
