// crema._crema: the C++ side of the crema package. The package's Python
// modules (crema/pycaffe.py and the others) add pycaffe's conveniences on top.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "crema/common.hpp"
#include "crema/layer_factory.hpp"
#include "crema/python_layer/python_layer.hpp"
#include "crema/util/io.hpp"

namespace py = pybind11;

namespace crema {
namespace python {
namespace {

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
      "init_log", [](int level) { FLAGS_minloglevel = level; }, py::arg("level") = 0,
      "Logs at this glog level and above (0 INFO, 1 WARNING, 2 ERROR).");
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
  crema::python::BindNet(m);
  crema::python::BindSolvers(m);
  crema::python::BindImages(m);
  crema::python::BindExport(m);
  crema::python::RegisterPythonLayer();
}
