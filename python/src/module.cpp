// crema._crema: the C++ side of the crema package. The package's Python
// modules (crema/pycaffe.py and the others) add pycaffe's conveniences on top.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "crema/common.hpp"
#include "crema/layer_factory.hpp"
#include "crema/python_layer/python_layer.hpp"
#include "crema/util/benchmark.hpp"
#include "crema/util/io.hpp"

namespace py = pybind11;

namespace crema {
namespace python {
namespace {

// pycaffe's data-parallel settings of the calling thread's Context: the
// number of solvers that train one model (over every process) and this
// solver's rank among them. Each training data layer reads every
// solver_count-th record, starting at its rank; rank 0 tests, snapshots and
// logs. Set the count before the rank, and both before building the solver.
void BindDataParallelSettings(py::module_& m) {
  m.def("solver_count", &Context::solver_count, "Solvers training one model, in all processes.");
  m.def(
      "set_solver_count",
      [](int count) {
        CREMA_REQUIRE(count >= 1, "set_solver_count: " << count << " solvers; give 1 or more");
        Context::set_solver_count(count);
      },
      py::arg("count"));
  m.def("solver_rank", &Context::solver_rank, "This solver's rank, in [0, solver_count()).");
  m.def(
      "set_solver_rank",
      [](int rank) {
        CREMA_REQUIRE(rank >= 0, "set_solver_rank: rank " << rank << " is negative");
        Context::set_solver_rank(rank);
      },
      py::arg("rank"));
  m.def("set_multiprocess", &Context::set_multiprocess, py::arg("multiprocess"),
        "Records that this process is one of several training one model.");
}

// pycaffe's Timer: wall time on the CPU, the device's own events in GPU mode
// (the mode when the timer is made).
void BindTimer(py::module_& m) {
  py::class_<Timer>(m, "Timer")
      .def(py::init<>())
      .def("start", &Timer::Start)
      .def("stop", &Timer::Stop)
      .def_property_readonly("ms", &Timer::MilliSeconds,
                             "Milliseconds between the last start and stop (stops a running one).");
}

void BindModuleFunctions(py::module_& m) {
  m.def(
      "set_mode_cpu", [] { Context::set_mode(Context::CPU); },
      "Computes on the CPU (the calling thread's mode).");
  m.def(
      "set_mode_gpu", [] { Context::set_mode(Context::GPU); },
      "Computes on the GPU set by set_device (the calling thread's mode).");
  m.def("set_device", &Context::SetDevice, py::arg("device_id"),
        "Picks the GPU the calling thread computes on.");
  m.def(
      "set_random_seed", [](uint64_t seed) { Context::set_random_seed(seed); }, py::arg("seed"),
      "Seeds the calling thread's generator (fillers, dropout, data order).");
  m.def("layer_type_list", &LayerRegistry<float>::LayerTypeList,
        "The layer types a prototxt may name.");
  m.def(
      "init_log",
      [](int level, bool to_stderr) {
        FLAGS_minloglevel = level;
        if (to_stderr) FLAGS_logtostderr = true;
      },
      py::arg("level") = 0, py::arg("stderr") = false,
      "Logs at this glog level and above (0 INFO, 1 WARNING, 2 ERROR); stderr=True logs "
      "to standard error instead of glog's files.");
  m.def(
      "log", [](const std::string& message) { LOG(INFO) << message; }, py::arg("message"),
      "Writes message to Crema's log at INFO.");
  BindDataParallelSettings(m);
  m.def(
      "_write_file",
      [](const std::string& filename, const py::bytes& contents) {
        WriteFileAtomically(filename, std::string(contents));
      },
      py::arg("filename"), py::arg("contents"),
      "Writes a file by Crema's safe-write rule (temporary, checked writes, fsync, rename).");
  m.attr("TRAIN") = static_cast<int>(TRAIN);
  m.attr("TEST") = static_cast<int>(TEST);
}

}  // namespace
}  // namespace python
}  // namespace crema

PYBIND11_MODULE(_crema, m) {
  m.doc() = "Crema's C++ core: nets, blobs, solvers, Python layers";
  // A user error of the C++ side (a missing file, a malformed prototxt, a
  // wrong shape) raises crema.Error, a RuntimeError, with its message.
  py::register_exception<crema::Error>(m, "Error", PyExc_RuntimeError);
  crema::python::BindModuleFunctions(m);
  crema::python::BindTimer(m);
  crema::python::BindNet(m);
  crema::python::BindSolvers(m);
  crema::python::BindImages(m);
  crema::python::BindTransformer(m);
  crema::python::BindExport(m);
  crema::python::BindEvaluation(m);
  crema::python::RegisterPythonLayer();
}
