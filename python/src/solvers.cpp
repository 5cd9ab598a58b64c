// Solvers with pycaffe's names: SGDSolver and its five relatives built from a
// solver prototxt, get_solver (the type the file names), and what a training
// loop written in Python needs (step, solve, snapshot, restore, apply_update,
// add_callback). step and solve release the GIL while they train.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/upgrade_proto.hpp"

namespace py = pybind11;

namespace crema {
namespace python {
namespace {

using SolverF = Solver<float>;

SolverParameter ReadSolver(const std::string& filename) {
  SolverParameter param;
  ReadSolverParamsFromTextFile(filename, &param);
  return param;
}

// A Python callable run from the solver's loop (on the thread that called
// step, which released the GIL).
std::function<void()> WithGil(py::function callback) {
  auto shared = std::make_shared<py::function>(std::move(callback));
  return [shared] {
    py::gil_scoped_acquire gil;
    (*shared)();
  };
}

template <template <typename> class Type>
void BindSolverType(py::module_& m, const char* name) {
  py::class_<Type<float>, SolverF, std::shared_ptr<Type<float>>>(m, name).def(
      py::init([](const std::string& filename) {
        return std::make_shared<Type<float>>(ReadSolver(filename));
      }),
      py::arg("solver_file"));
}

}  // namespace

void BindSolvers(py::module_& m) {
  py::class_<SolverF, std::shared_ptr<SolverF>>(m, "Solver")
      .def_property_readonly("net", &SolverF::net)
      .def_property_readonly("test_nets", &SolverF::test_nets)
      .def_property_readonly("iter", &SolverF::iter)
      .def_property_readonly("type", [](const SolverF& s) { return std::string(s.type()); })
      .def("step", &SolverF::Step, py::arg("iters"), py::call_guard<py::gil_scoped_release>(),
           "Runs iters training iterations.")
      .def(
          "solve",
          [](SolverF& s, const py::object& resume) {
            const std::string file = resume.is_none() ? "" : resume.cast<std::string>();
            py::gil_scoped_release release;
            s.Solve(file);
          },
          py::arg("resume") = py::none(), "Trains to max_iter, from a .solverstate if given.")
      .def("snapshot", &SolverF::Snapshot, py::call_guard<py::gil_scoped_release>())
      .def("restore", &SolverF::Restore, py::arg("state_file"),
           py::call_guard<py::gil_scoped_release>())
      .def("apply_update", &SolverF::ApplyUpdate, py::call_guard<py::gil_scoped_release>())
      .def("test_all", &SolverF::TestAll, py::call_guard<py::gil_scoped_release>())
      .def(
          "add_callback",
          [](SolverF& s, py::function on_start, py::function on_gradients_ready) {
            s.add_on_start(WithGil(std::move(on_start)));
            s.add_on_gradients_ready(WithGil(std::move(on_gradients_ready)));
          },
          py::arg("on_start"), py::arg("on_gradients_ready"),
          "Calls on_start() at the start of each iteration and on_gradients_ready() "
          "before each update.");
  BindSolverType<SGDSolver>(m, "SGDSolver");
  BindSolverType<NesterovSolver>(m, "NesterovSolver");
  BindSolverType<AdaGradSolver>(m, "AdaGradSolver");
  BindSolverType<RMSPropSolver>(m, "RMSPropSolver");
  BindSolverType<AdaDeltaSolver>(m, "AdaDeltaSolver");
  BindSolverType<AdamSolver>(m, "AdamSolver");
  m.def(
      "get_solver",
      [](const std::string& filename) {
        return std::shared_ptr<SolverF>(CreateSolver<float>(ReadSolver(filename)));
      },
      py::arg("solver_file"), "The solver of the type the file names (SGD when it names none).");
}

}  // namespace python
}  // namespace crema
