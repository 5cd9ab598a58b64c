// (d) A .solverstate: the first byte picks the solver type (each keeps other
// history), the rest is the state file; restore it into a small solver and
// take one step. The weights file it names is looked for as a user would
// give it (the seeds name weights kept in the corpus).
#include <memory>

#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "fuzz_common.hpp"
#include "small_nets.hpp"

namespace {
const char* const kTypes[] = {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"};
constexpr int kNumTypes = 6;

std::unique_ptr<crema::Solver<float>> SmallSolver(int type, const std::string& prefix) {
  crema::SolverParameter param;
  crema::ReadProtoFromString(crema::fuzz::kSmallTrainNet, "small net", param.mutable_net_param());
  param.set_type(kTypes[type]);
  param.set_base_lr(0.01f);
  param.set_lr_policy("multistep");
  param.add_stepvalue(2);
  param.add_stepvalue(4);
  param.set_gamma(0.5f);
  // AdaGrad and RMSProp take no momentum; AdaDelta needs one (its decay).
  if (type != 2 && type != 3) param.set_momentum(0.9f);
  param.set_max_iter(10);
  param.set_snapshot_prefix(prefix);
  param.set_random_seed(1);
  return crema::CreateSolver<float>(param);
}
}  // namespace

namespace crema {
namespace fuzz {
void WriteSeeds(const std::string& dir) {
  for (int type = 0; type < kNumTypes; ++type) {
    const std::string prefix = dir + "/" + kTypes[type];
    auto solver = SmallSolver(type, prefix);
    solver->Step(3);
    solver->Snapshot();
    const std::string state = prefix + "_iter_3.solverstate";
    WriteFile(dir + "/seed-" + kTypes[type],
              std::string(1, static_cast<char>(type)) + ReadFile(state));
    Remove(state);
  }
}
}  // namespace fuzz
}  // namespace crema

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int type = data[0] % kNumTypes;
  const std::string path = crema::fuzz::WorkDir() + "/input.solverstate";
  crema::fuzz::WriteFile(path, data + 1, size - 1);
  try {
    auto solver = SmallSolver(type, crema::fuzz::WorkDir() + "/snapshot");
    solver->Restore(path);
    solver->Step(1);
  } catch (const crema::Error&) {
  }
  return 0;
}
