// The solver tests' smallest model: one linear unit w . x fitted to a
// target by Euclidean loss, its inputs set by SetInputs (x = (1, -2),
// y = 3), its weights read back by LinearWeights.
#ifndef CREMA_TESTS_LINEAR_SOLVER_HPP_
#define CREMA_TESTS_LINEAR_SOLVER_HPP_

#include <string>
#include <vector>

#include "crema/solver.hpp"
#include "crema/util/io.hpp"

namespace crema {

// One linear unit w . x fitted to a target by Euclidean loss: the gradient
// is (w . x - y) x, simple enough to follow by hand.
inline const char* const kLinearNet =
    "name: 'linear'"
    "layer { name: 'input' type: 'Input' top: 'x' top: 'y'"
    "  input_param { shape { dim: 1 dim: 2 } shape { dim: 1 dim: 1 } } }"
    "layer { name: 'fc' type: 'InnerProduct' bottom: 'x' top: 'p'"
    "  inner_product_param { num_output: 1 bias_term: false"
    "    weight_filler { type: 'constant' value: 0.5 } } }"
    "layer { name: 'loss' type: 'EuclideanLoss' bottom: 'p' bottom: 'y' top: 'loss' }";

inline SolverParameter LinearSolver(const std::string& type, const std::string& extra = "") {
  SolverParameter param;
  ReadProtoFromString(std::string("base_lr: 0.1 lr_policy: 'fixed' max_iter: 10 display: 0 ") +
                          "snapshot_after_train: false type: '" + type + "' " + extra,
                      "solver", &param);
  ReadProtoFromString(kLinearNet, "net", param.mutable_net_param());
  return param;
}

inline void SetInputs(Net<double>* net) {
  double* x = net->blob_by_name("x")->mutable_cpu_data();
  x[0] = 1.0;
  x[1] = -2.0;
  net->blob_by_name("y")->mutable_cpu_data()[0] = 3.0;
}

// The linear unit's weights w, as the solver has them now.
inline std::vector<double> LinearWeights(const Solver<double>& solver) {
  const Blob<double>* w = solver.net()->learnable_params()[0];
  return std::vector<double>(w->cpu_data(), w->cpu_data() + w->count());
}

}  // namespace crema

#endif  // CREMA_TESTS_LINEAR_SOLVER_HPP_
