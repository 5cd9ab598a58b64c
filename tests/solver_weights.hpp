// Every learnable blob of a solver's net, copied out in the net's order: what
// the resume tests compare bitwise between a straight run and a resumed one.
#ifndef CREMA_TESTS_SOLVER_WEIGHTS_HPP_
#define CREMA_TESTS_SOLVER_WEIGHTS_HPP_

#include <vector>

#include "crema/solver.hpp"

namespace crema {

template <typename Dtype>
std::vector<std::vector<Dtype>> LearnableWeights(const Solver<Dtype>& solver) {
  std::vector<std::vector<Dtype>> weights;
  for (const Blob<Dtype>* blob : solver.net()->learnable_params()) {
    weights.emplace_back(blob->cpu_data(), blob->cpu_data() + blob->count());
  }
  return weights;
}

}  // namespace crema

#endif  // CREMA_TESTS_SOLVER_WEIGHTS_HPP_
