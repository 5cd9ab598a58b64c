// Solvers with pycaffe's names: SGDSolver and its five relatives built from a
// solver prototxt, get_solver (the type the file names), and what a training
// loop written in Python needs (step, solve, snapshot, restore, apply_update,
// add_callback), and NCCL, which joins solvers of several processes.
// step and solve release the GIL while they train.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings.hpp"
#include "crema/nccl_group.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/upgrade_proto.hpp"

namespace py = pybind11;

namespace crema {
namespace python {
namespace {

using SolverF = Solver<float>;
using NcclF = NcclGroup<float>;

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

// pycaffe's caffe.NCCL: one process's solver in a group of processes, one
// GPU each (BVLC's python/train.py). Joining waits for every process of the
// group, so it runs without the GIL.
void BindNccl(py::module_& m) {
  py::class_<NcclF, std::shared_ptr<NcclF>>(m, "NCCL")
      .def(py::init([](std::shared_ptr<SolverF> solver, const std::string& uid) {
             py::gil_scoped_release release;
             return std::make_shared<NcclF>(std::move(solver), uid);
           }),
           py::arg("solver"), py::arg("uid"),
           "Joins the group named by uid as rank solver_rank() of solver_count().")
      .def_static(
          "new_uid", [] { return py::bytes(NcclF::NewUid()); },
          "A fresh group id (bytes) to hand to every process of one group.")
      .def("bcast", &NcclF::Broadcast, py::call_guard<py::gil_scoped_release>(),
           "Gives every process rank 0's weights.")
      .def("_attach", &NcclF::AttachToSolver,
           "Averages the solver's gradients over the group at every iteration (once).")
      .def_property_readonly("_solver", &NcclF::solver);
  m.def("has_nccl", &NcclF::Available, "True when this build can join processes with NCCL.");
}

// solver.add_callback(nccl): the group's solver averages its gradients over
// the group at each iteration.
void AddNcclCallback(SolverF& solver, NcclF& group) {
  CREMA_REQUIRE(group.solver().get() == &solver,
                "add_callback: this NCCL object was made for another solver");
  group.AttachToSolver();
}

}  // namespace

void BindSolvers(py::module_& m) {
  BindNccl(m);
  py::class_<SolverF, std::shared_ptr<SolverF>>(m, "Solver")
      .def_property_readonly(
          "_param_string",
          [](const SolverF& s) { return py::bytes(s.param().SerializeAsString()); },
          "The solver's settings, serialized (pycaffe's solver.param parses them).")
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
          "before each update.")
      .def("add_callback", &AddNcclCallback, py::arg("nccl"),
           "Averages the gradients over the NCCL group before each update.");
  BindSolverType<SGDSolver>(m, "SGDSolver");
  BindSolverType<NesterovSolver>(m, "NesterovSolver");
  BindSolverType<AdaGradSolver>(m, "AdaGradSolver");
  BindSolverType<RMSPropSolver>(m, "RMSPropSolver");
  BindSolverType<AdaDeltaSolver>(m, "AdaDeltaSolver");
  BindSolverType<AdamSolver>(m, "AdamSolver");
  BindSolverType<SGDWSolver>(m, "SGDWSolver");
  BindSolverType<AdamWSolver>(m, "AdamWSolver");
  m.def(
      "get_solver",
      [](const std::string& filename) {
        return std::shared_ptr<SolverF>(CreateSolver<float>(ReadSolver(filename)));
      },
      py::arg("solver_file"), "The solver of the type the file names (SGD when it names none).");
}

}  // namespace python
}  // namespace crema
