#include "crema/python_layer/python_layer.hpp"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "crema/layer_factory.hpp"

namespace py = pybind11;

namespace crema {
namespace python {

namespace {

// The blobs of a call as a Python list of Blob objects that refer to (do not
// own) the net's blobs.
py::list BlobList(const std::vector<Blob<float>*>& blobs) {
  py::list list;
  for (Blob<float>* blob : blobs) list.append(py::cast(blob, py::return_value_policy::reference));
  return list;
}

std::string Describe(const LayerParameter& param) {
  return "layer '" + param.name() + "' (Python, " + param.python_param().module() + "." +
         param.python_param().layer() + ")";
}

}  // namespace

void EnsureInterpreter() {
  if (Py_IsInitialized()) return;
  py::initialize_interpreter();
  // The solver threads take the GIL when they call a layer; this thread holds
  // it after start-up, so it lets it go.
  PyEval_SaveThread();
}

PythonLayer::PythonLayer(const LayerParameter& param) : Layer<float>(param) {
  const PythonParameter& python = param.python_param();
  CREMA_REQUIRE(!python.module().empty() && !python.layer().empty(),
                Describe(param) << ": python_param needs both module and layer");
  EnsureInterpreter();
  py::gil_scoped_acquire gil;
  try {
    // The extension registers Blob and BlobVec with Python; the tool's
    // interpreter has not imported it unless the layer's module did.
    py::module_::import("crema._crema");
    const py::object proto = py::module_::import("crema.proto.crema_pb2").attr("LayerParameter");
    std::string bytes;
    param.SerializeToString(&bytes);
    const py::object layer_class =
        py::module_::import(python.module().c_str()).attr(python.layer().c_str());
    instance_ = layer_class(proto.attr("FromString")(py::bytes(bytes)));
    instance_.attr("param_str") = python.param_str();
    instance_.attr("phase") = static_cast<int>(param.phase());
    instance_.attr("blobs") = BlobVec{&blobs_};
  } catch (const py::error_already_set& e) {
    CREMA_FAIL(Describe(param) << ": " << e.what());
  }
}

PythonLayer::~PythonLayer() {
  if (!instance_) return;
  if (!Py_IsInitialized()) {
    instance_.release();  // the interpreter is gone, and its objects with it
    return;
  }
  py::gil_scoped_acquire gil;
  instance_ = py::object();
}

template <typename... Args>
void PythonLayer::Call(const char* method, Args&&... args) {
  py::gil_scoped_acquire gil;
  try {
    instance_.attr(method)(std::forward<Args>(args)...);
  } catch (const py::error_already_set& e) {
    CREMA_FAIL(Describe(layer_param_) << ", " << method << ": " << e.what());
  }
}

void PythonLayer::LayerSetUp(const std::vector<Blob<float>*>& bottom,
                             const std::vector<Blob<float>*>& top) {
  py::gil_scoped_acquire gil;
  Call("setup", BlobList(bottom), BlobList(top));
}

void PythonLayer::Reshape(const std::vector<Blob<float>*>& bottom,
                          const std::vector<Blob<float>*>& top) {
  py::gil_scoped_acquire gil;
  Call("reshape", BlobList(bottom), BlobList(top));
}

void PythonLayer::Forward_cpu(const std::vector<Blob<float>*>& bottom,
                              const std::vector<Blob<float>*>& top) {
  py::gil_scoped_acquire gil;
  Call("forward", BlobList(bottom), BlobList(top));
}

void PythonLayer::Backward_cpu(const std::vector<Blob<float>*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob<float>*>& bottom) {
  py::gil_scoped_acquire gil;
  py::list down;
  for (bool value : propagate_down) down.append(value);
  Call("backward", BlobList(top), down, BlobList(bottom));
}

void RegisterPythonLayer() {
  if (LayerRegistry<float>::IsRegistered("Python")) return;
  LayerRegistry<float>::AddCreator("Python", [](const LayerParameter& param) {
    return std::shared_ptr<Layer<float>>(new PythonLayer(param));
  });
}

}  // namespace python
}  // namespace crema
