// crema.export_onnx: `crema export` from Python.
#include <pybind11/pybind11.h>

#include <string>

#include "bindings.hpp"
#include "crema/export/onnx_export.hpp"

namespace py = pybind11;

namespace crema {
namespace python {

void BindExport(py::module_& m) {
  m.def(
      "export_onnx",
      [](const std::string& model, const std::string& weights, const std::string& output,
         int opset) {
        OnnxExportOptions options;
        options.opset = opset;
        py::gil_scoped_release release;
        ExportOnnx(model, weights, output, options);
      },
      py::arg("model"), py::arg("weights"), py::arg("output"), py::arg("opset") = kOnnxMinOpset,
      "Writes the deploy net `model` with the trained `weights` as the ONNX model `output` "
      "(raises crema.Error for a layer without an ONNX equivalent, or in a build without ONNX)");
}

}  // namespace python
}  // namespace crema
