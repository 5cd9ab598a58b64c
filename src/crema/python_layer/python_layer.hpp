// The "Python" layer (python_param { module layer param_str share_in_parallel }):
// a layer whose set-up, reshape, forward and backward are the methods of an
// instance of a Python class (a subclass of crema.Layer), as in Caffe. It is
// compiled into the Python extension (crema._crema), where the interpreter is
// the one that imported it, and into the `crema` tool, which starts an
// interpreter the first time a net asks for such a layer. Every call into
// Python takes the GIL, so solver threads that released it (solver.step, or
// the tool's --solver_count=N threads) may run Python layers.
#ifndef CREMA_PYTHON_PYTHON_LAYER_HPP_
#define CREMA_PYTHON_PYTHON_LAYER_HPP_

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "crema/layer.hpp"

namespace crema {
namespace python {

// Hidden, as pybind11's own types are: each binary (the extension, the tool)
// has its own copy, and its py::object member is of a hidden type.
class __attribute__((visibility("hidden"))) PythonLayer : public Layer<float> {
 public:
  // Imports python_param.module and makes an instance of python_param.layer;
  // an import error, a missing class or one that raises is a user error
  // naming the layer and Python's message.
  explicit PythonLayer(const LayerParameter& param);
  ~PythonLayer() override;

  void LayerSetUp(const std::vector<Blob<float>*>& bottom,
                  const std::vector<Blob<float>*>& top) override;
  void Reshape(const std::vector<Blob<float>*>& bottom,
               const std::vector<Blob<float>*>& top) override;
  const char* type() const override { return "Python"; }
  bool ShareInParallel() const override { return layer_param_.python_param().share_in_parallel(); }

  // The Python instance (for the extension's Net.layers).
  const pybind11::object& instance() const { return instance_; }

 protected:
  void Forward_cpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;
  void Backward_cpu(const std::vector<Blob<float>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<float>*>& bottom) override;
  // (In GPU mode the default Forward_gpu/Backward_gpu run these bodies: a
  // Python layer computes on the host, its blobs' data moving there.)

 private:
  // Calls instance_.<method>(args...) with the GIL held; a Python exception
  // becomes an Error naming the layer, the method and Python's message.
  template <typename... Args>
  void Call(const char* method, Args&&... args);

  pybind11::object instance_;
};

// A layer's learnable blobs as Python sees them (self.blobs): a view of the
// C++ layer's vector, so that blobs a Python layer adds (add_blob) are the
// ones the solver updates and the net saves.
struct BlobVec {
  std::vector<std::shared_ptr<Blob<float>>>* blobs;
};

// Registers the "Python" layer type (float nets) unless it already is: the
// tool calls it at start-up, the extension when it is imported.
void RegisterPythonLayer();

// In the tool: starts the interpreter if none runs (and releases the GIL so
// that any thread may take it). The extension runs inside one already.
void EnsureInterpreter();

}  // namespace python
}  // namespace crema

#endif  // CREMA_PYTHON_PYTHON_LAYER_HPP_
