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
#define EXPECT_RATE(got, expected) \
  EXPECT_NEAR(got, expected, 1e-7 * std::abs(expected) + 1e-15)

SolverParameter Schedule(const std::string& text) {
  SolverParameter param;
  ReadProtoFromString("max_iter: 1000 " + text, "solver", &param);
  RequireScheduleMeaningful(param);
  return param;
}

TEST(LrScheduleTest, LinearWarmupRampsToTheRateWhereItEnds) {
  const SolverParameter fixed =
      Schedule("base_lr: 0.1 lr_policy: 'fixed' warmup_iter: 100 warmup_start_lr: 0.01");
  EXPECT_RATE(LearningRate(fixed, 0), 0.01);
  EXPECT_RATE(LearningRate(fixed, 50), 0.055);  // halfway from 0.01 to 0.1
  EXPECT_RATE(LearningRate(fixed, 100), 0.1);
  EXPECT_RATE(LearningRate(fixed, 700), 0.1);
  // Before a step policy whose first step falls inside the warm-up: the ramp
  // ends on the stepped rate 0.1 * 0.5^2, and the steps go on after it.
  const SolverParameter step = Schedule(
      "base_lr: 0.1 lr_policy: 'step' stepsize: 40 gamma: 0.5 warmup_iter: 100");
  EXPECT_RATE(LearningRate(step, 0), 0);
  EXPECT_RATE(LearningRate(step, 25), 0.025 / 4);
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
  const SolverParameter param = Schedule(
      "base_lr: 1 lr_policy: 'sgdr' period: 100 p_mult: 2 lr_mult: 0.5 min_lr: 0.1");
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
  const SolverParameter early = Schedule(
      "base_lr: 1 lr_policy: 'onecycle' onecycle_pct_start: 0.5 onecycle_div_factor: 10");
  EXPECT_RATE(LearningRate(early, 250), 0.55);
  EXPECT_RATE(LearningRate(early, 750), 0.5);
}

TEST(LrScheduleTest, CaffePoliciesAreUnchanged) {
  EXPECT_RATE(LearningRate(Schedule("base_lr: 0.01 lr_policy: 'inv' gamma: 0.0001 power: 0.75"),
                           1000),
              0.01 * std::pow(1.1, -0.75));
  const SolverParameter multistep = Schedule(
      "base_lr: 1 lr_policy: 'multistep' gamma: 0.1 stepvalue: 100 stepvalue: 300");
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
  EXPECT_NE(Refusal("base_lr: 0.1 lr_policy: 'fixed' warmup_iter: -1")
                .find("warmup_iter is -1"),
            std::string::npos);
}

}  // namespace
}  // namespace crema
