// (b) A solver prototxt, as text: parse, upgrade, build the solver and run a
// few iterations. The nets it names by file are replaced by a small net
// (the files are not the input), snapshots go to the scratch folder, and
// the counts that only cost time (test_iter, iter_size) are capped.
#include <algorithm>

#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "fuzz_common.hpp"

namespace crema {
namespace fuzz {
void WriteSeeds(const std::string&) {}
}  // namespace fuzz
}  // namespace crema

namespace {
const char kSmallNet[] = R"(
  name: "small"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
          dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 }
                             data_filler { type: "gaussian" }
                             data_filler { type: "constant" value: 1 } } }
  layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
          inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

void UseSmallNets(crema::SolverParameter* param) {
  crema::NetParameter small;
  crema::ReadProtoFromString(kSmallNet, "small net", &small);
  if (param->has_net()) {
    param->clear_net();
    *param->mutable_net_param() = small;
  }
  if (param->has_train_net()) {
    param->clear_train_net();
    *param->mutable_train_net_param() = small;
  }
  for (int i = 0; i < param->test_net_size(); ++i) *param->add_test_net_param() = small;
  param->clear_test_net();
  for (int i = 0; i < param->test_iter_size(); ++i) {
    param->set_test_iter(i, std::min(param->test_iter(i), 3));
  }
  param->set_iter_size(std::min(param->iter_size(), 3));
  param->set_average_loss(std::min(param->average_loss(), 100));
  param->set_snapshot_prefix(crema::fuzz::WorkDir() + "/snapshot");
  param->set_solver_mode(crema::SolverParameter::CPU);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace crema;
  SolverParameter param;
  try {
    ReadProtoFromString(std::string(reinterpret_cast<const char*>(data), size), "fuzz input",
                        &param);
    UseSmallNets(&param);
    std::unique_ptr<Solver<float>> solver = CreateSolver<float>(param);
    solver->Step(3);
  } catch (const Error&) {
  }
  return 0;
}
