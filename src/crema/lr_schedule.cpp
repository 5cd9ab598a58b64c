#include "crema/lr_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <sstream>

#include "crema/common.hpp"

namespace crema {

namespace {

const double kPi = 3.14159265358979323846;

const std::set<std::string>& Policies() {
  static const std::set<std::string> policies{"fixed",     "step",       "exp",     "inv",
                                              "multistep", "poly",       "sigmoid", "sgdr",
                                              "onecycle",  "multifixed", "plateau"};
  return policies;
}

std::string PolicyList() {
  std::string list;
  for (const std::string& policy : Policies()) list += (list.empty() ? "" : ", ") + policy;
  return list;
}

// Half a cosine from `from` (at t = 0) to `to` (at t = 1).
double CosineBetween(double from, double to, double t) {
  return to + (from - to) * (1 + std::cos(kPi * t)) / 2;
}

// Cosine annealing with warm restarts: cycle k lasts period * p_mult^k
// iterations and starts at base_lr * lr_mult^k; each falls to min_lr.
double Sgdr(const SolverParameter& param, double iter) {
  double length = param.has_period() ? param.period() : param.max_iter();
  double start = 0, peak = param.base_lr();
  if (param.p_mult() == 1) {  // equal cycles: no walk
    const double cycle = std::floor(iter / length);
    start = cycle * length;
    peak *= std::pow(param.lr_mult(), cycle);
  } else {  // cycles grow geometrically: as many steps as restarts so far
    while (iter >= start + length) {
      start += length;
      length *= param.p_mult();
      peak *= param.lr_mult();
    }
  }
  return CosineBetween(peak, param.min_lr(), (iter - start) / length);
}

double OneCycle(const SolverParameter& param, double iter) {
  const double up = param.onecycle_pct_start() * param.max_iter();
  const double peak = param.base_lr();
  if (iter < up) return CosineBetween(peak / param.onecycle_div_factor(), peak, iter / up);
  return CosineBetween(peak, param.min_lr(), std::min(1.0, (iter - up) / (param.max_iter() - up)));
}

// Intel's "multifixed": stagelr[s] for the first stage s whose stageiter[s]
// is at or past the iteration, the last stage's rate past them all.
double MultiFixed(const SolverParameter& param, double iter) {
  int stage = 0;
  while (stage < param.stageiter_size() - 1 && iter > param.stageiter(stage)) ++stage;
  return param.stagelr(stage);
}

// The policy's own rate, before any warm-up.
double PolicyRate(const SolverParameter& param, double iter, int plateau_step) {
  const std::string& policy = param.lr_policy();
  const double base = param.base_lr(), gamma = param.gamma(), power = param.power();
  if (policy == "fixed") return base;
  if (policy == "step") return base * std::pow(gamma, std::floor(iter / param.stepsize()));
  if (policy == "exp") return base * std::pow(gamma, iter);
  if (policy == "inv") return base * std::pow(1.0 + gamma * iter, -power);
  if (policy == "multistep") {
    int passed = 0;  // stepvalues are increasing (RequireScheduleMeaningful)
    while (passed < param.stepvalue_size() && iter >= param.stepvalue(passed)) ++passed;
    return base * std::pow(gamma, passed);
  }
  // NVCaffe's poly falls to min_lr (0: BVLC's, to 0).
  if (policy == "poly") {
    return (base - param.min_lr()) * std::pow(1.0 - iter / param.max_iter(), power) +
           param.min_lr();
  }
  if (policy == "sigmoid") return base / (1.0 + std::exp(-gamma * (iter - param.stepsize())));
  if (policy == "sgdr") return Sgdr(param, iter);
  if (policy == "onecycle") return OneCycle(param, iter);
  if (policy == "multifixed") return MultiFixed(param, iter);
  if (policy == "plateau") return base * std::pow(gamma, plateau_step);
  CREMA_FAIL("solver: unknown lr_policy '" << policy << "' (" << PolicyList() << ")");
}

void RequirePolicySettings(const SolverParameter& param) {
  const std::string& policy = param.lr_policy();
  CREMA_REQUIRE(Policies().count(policy) > 0,
                "solver: unknown lr_policy '" << policy << "' (" << PolicyList() << ")");
  if (policy == "step" || policy == "exp" || policy == "inv" || policy == "multistep" ||
      policy == "sigmoid" || policy == "plateau") {
    RequireFinite(param.gamma(), "gamma");
  }
  if (policy == "plateau") {
    CREMA_REQUIRE(param.plateau_winsize_size() > 0,
                  "solver: lr_policy plateau needs plateau_winsize, the iterations without a "
                  "new loss minimum before each step");
    for (int i = 0; i < param.plateau_winsize_size(); ++i) {
      CREMA_REQUIRE(param.plateau_winsize(i) > 0,
                    "solver: plateau_winsize " << param.plateau_winsize(i) << " (entry " << i + 1
                                               << ") must be a positive number of iterations");
    }
  }
  if (policy == "inv" || policy == "poly") RequireFinite(param.power(), "power");
  if (policy == "step") {
    CREMA_REQUIRE(param.stepsize() > 0, "solver: lr_policy step needs a positive stepsize");
  }
  if (policy == "poly" || policy == "onecycle" || (policy == "sgdr" && !param.has_period())) {
    CREMA_REQUIRE(param.max_iter() > 0,
                  "solver: lr_policy " << policy << " needs a positive max_iter");
  }
  if (policy == "multistep") {
    for (int i = 0; i < param.stepvalue_size(); ++i) {
      CREMA_REQUIRE(param.stepvalue(i) > (i == 0 ? 0 : param.stepvalue(i - 1)),
                    "solver: stepvalue " << param.stepvalue(i) << " (entry " << i + 1
                                         << ") must be positive and above the one before: "
                                            "the steps are iterations in increasing order");
    }
  }
  if (policy == "multifixed") {
    CREMA_REQUIRE(param.stagelr_size() > 0 && param.stagelr_size() == param.stageiter_size(),
                  "solver: lr_policy multifixed needs as many stagelr as stageiter values, at "
                  "least one (it has "
                      << param.stagelr_size() << " and " << param.stageiter_size() << ")");
    for (int i = 0; i < param.stagelr_size(); ++i) {
      RequireFinite(param.stagelr(i), "stagelr");
      CREMA_REQUIRE(param.stagelr(i) >= 0, "solver: stagelr " << param.stagelr(i) << " (entry "
                                                              << i + 1 << ") is negative");
    }
  }
  RequireFinite(param.min_lr(), "min_lr");
  CREMA_REQUIRE(param.min_lr() >= 0, "solver: min_lr is " << param.min_lr()
                                                          << "; the floor of the rate must not be "
                                                             "negative");
  if (policy == "sgdr" || policy == "onecycle" || policy == "poly") {
    CREMA_REQUIRE(param.min_lr() >= 0 && param.min_lr() <= param.base_lr(),
                  "solver: min_lr is " << param.min_lr() << "; lr_policy " << policy
                                       << " falls to it from base_lr " << param.base_lr()
                                       << ", so it must lie in [0, base_lr]");
  }
  if (policy == "sgdr") {
    CREMA_REQUIRE(!param.has_period() || param.period() > 0,
                  "solver: period is " << param.period()
                                       << "; the first cosine cycle must last at least one "
                                          "iteration (leave it out for one cycle of max_iter)");
    RequireFinite(param.p_mult(), "p_mult");
    CREMA_REQUIRE(param.p_mult() >= 1, "solver: p_mult is " << param.p_mult()
                                                            << "; each cycle lasts p_mult times "
                                                               "the one before, so it must be "
                                                               "at least 1");
    RequireFinite(param.lr_mult(), "lr_mult");
    CREMA_REQUIRE(param.lr_mult() > 0, "solver: lr_mult is " << param.lr_mult()
                                                             << "; each restart's peak is lr_mult "
                                                                "times the one before, so it must "
                                                                "be positive");
  }
  if (policy == "onecycle") {
    const double pct = param.onecycle_pct_start();
    CREMA_REQUIRE(std::isfinite(pct) && pct > 0 && pct < 1, "solver: onecycle_pct_start is "
                                                                << pct
                                                                << "; the rise takes a fraction of "
                                                                   "max_iter in (0, 1)");
    CREMA_REQUIRE(std::isfinite(param.onecycle_div_factor()) && param.onecycle_div_factor() >= 1,
                  "solver: onecycle_div_factor is " << param.onecycle_div_factor()
                                                    << "; the cycle starts at base_lr divided by "
                                                       "it, so it must be at least 1");
  }
}

// NVCaffe's ramp-up: rampup_lr to base_lr over rampup_interval iterations.
void RequireRampupSettings(const SolverParameter& param) {
  CREMA_REQUIRE(param.rampup_interval() >= 0, "solver: rampup_interval is "
                                                  << param.rampup_interval()
                                                  << "; it must not be negative");
  if (param.rampup_interval() == 0) return;
  CREMA_REQUIRE(param.warmup_iter() == 0,
                "solver: rampup_interval (NVCaffe's ramp-up) and warmup_iter (Intel's warm-up) "
                "are two ways to start a schedule; give one");
  RequireFinite(param.rampup_lr(), "rampup_lr");
  CREMA_REQUIRE(param.rampup_lr() >= 0,
                "solver: rampup_lr is " << param.rampup_lr() << "; it must not be negative");
}

void RequireWarmupSettings(const SolverParameter& param) {
  CREMA_REQUIRE(param.warmup_iter() >= 0,
                "solver: warmup_iter is " << param.warmup_iter() << "; it must not be negative");
  if (param.warmup_iter() == 0) return;
  CREMA_REQUIRE(param.warmup_iter() <= param.max_iter(),
                "solver: warmup_iter " << param.warmup_iter() << " is longer than max_iter "
                                       << param.max_iter());
  RequireFinite(param.warmup_start_lr(), "warmup_start_lr");
  CREMA_REQUIRE(param.warmup_start_lr() >= 0, "solver: warmup_start_lr is "
                                                  << param.warmup_start_lr()
                                                  << "; it must not be negative");
  const std::string& policy = param.warmup_policy();
  CREMA_REQUIRE(policy == "linear" || policy == "exponential",
                "solver: unknown warmup_policy '" << policy << "' (linear, exponential)");
  CREMA_REQUIRE(policy == "linear" || param.warmup_start_lr() > 0,
                "solver: warmup_policy exponential multiplies the rate by a constant factor "
                "from warmup_start_lr, which must then be positive (it is 0)");
}

}  // namespace

void RequireFinite(double value, const char* field, bool non_negative) {
  CREMA_REQUIRE(std::isfinite(value),
                "solver: " << field << " is " << value << "; it must be a finite number");
  CREMA_REQUIRE(!non_negative || value >= 0,
                "solver: " << field << " is " << value << "; it must not be negative");
}

void RequireScheduleMeaningful(const SolverParameter& param) {
  RequirePolicySettings(param);
  RequireRampupSettings(param);
  RequireWarmupSettings(param);
}

// The forks' starts replace the policy while they last, and the policy then
// goes on from the iteration reached, not from 0 (Intel's and NVCaffe's
// code): the rate may step down where they end.
void AdvancePlateau(const SolverParameter& param, int iter, float smoothed_loss,
                    PlateauState* state) {
  if (iter < param.rampup_interval() || iter < param.warmup_iter()) return;
  if (smoothed_loss < state->minimum_loss) {
    state->minimum_loss = smoothed_loss;
    state->iter_last_event = iter;
  }
  if (state->step < param.plateau_winsize_size() &&
      int64_t{iter} >= int64_t{state->iter_last_event} + param.plateau_winsize(state->step)) {
    ++state->step;
    state->iter_last_event = iter;
  }
}

double LearningRate(const SolverParameter& param, int iter, int plateau_step) {
  const double base = param.base_lr();
  double rate;
  if (iter < param.rampup_interval()) {
    // NVCaffe 0.17: quadratic from rampup_lr.
    const double alpha = static_cast<double>(iter) / param.rampup_interval();
    rate = param.rampup_lr() + (base - param.rampup_lr()) * alpha * alpha;
  } else if (iter < param.warmup_iter()) {
    // Intel's warm-up: linear from warmup_start_lr to base_lr at warmup_iter
    // (Crema's exponential: geometric between the same two rates).
    const double start = param.warmup_start_lr();
    const double t = static_cast<double>(iter) / param.warmup_iter();
    rate = param.warmup_policy() == "exponential" ? start * std::pow(base / start, t)
                                                  : start + (base - start) * t;
  } else {
    rate = PolicyRate(param, iter, plateau_step);
  }
  // NVCaffe's floor, under every policy and its ramp-up.
  return std::max(rate, static_cast<double>(param.min_lr()));
}

std::string DescribeSchedule(const SolverParameter& param) {
  std::ostringstream out;
  out << "lr_policy " << param.lr_policy() << " from base_lr " << param.base_lr();
  const std::string& policy = param.lr_policy();
  if (policy == "sgdr") {
    out << " (period " << (param.has_period() ? param.period() : param.max_iter()) << ", p_mult "
        << param.p_mult() << ", lr_mult " << param.lr_mult() << ", min_lr " << param.min_lr()
        << ")";
  } else if (policy == "plateau") {
    out << " (times gamma " << param.gamma() << " after each of";
    for (int window : param.plateau_winsize()) out << " " << window;
    out << " iterations without a new minimum of the smoothed loss)";
  } else if (policy == "onecycle") {
    out << " (rise over " << param.onecycle_pct_start() << " of max_iter from base_lr / "
        << param.onecycle_div_factor() << ", fall to min_lr " << param.min_lr() << ")";
  }
  if (param.warmup_iter() > 0) {
    out << " after a " << param.warmup_policy() << " warm-up of " << param.warmup_iter()
        << " iterations from " << param.warmup_start_lr();
  }
  if (param.rampup_interval() > 0) {
    out << " after a quadratic ramp-up of " << param.rampup_interval() << " iterations from "
        << param.rampup_lr();
  }
  if (param.min_lr() > 0) out << ", at least " << param.min_lr();
  if (policy == "plateau") return out.str();  // its rates follow the loss
  out << "; lr at";
  const int last = std::max(param.max_iter(), 1);
  const int three_quarters = static_cast<int>(int64_t{3} * last / 4);  // 3 * last overflows
  const std::set<int> marks{
      0, param.warmup_iter(), param.rampup_interval(), last / 4, last / 2, three_quarters, last};
  const char* separator = " ";
  for (int iter : marks) {
    out << separator << iter << ": " << LearningRate(param, iter);
    separator = ", ";
  }
  return out.str();
}

}  // namespace crema
