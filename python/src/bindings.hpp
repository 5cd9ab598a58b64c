// The parts of the crema._crema extension, each binding one area of the C++
// API with pycaffe's names; module.cpp calls them in order (the types a part
// uses are bound by an earlier part).
#ifndef CREMA_PYTHON_BINDINGS_HPP_
#define CREMA_PYTHON_BINDINGS_HPP_

#include <pybind11/pybind11.h>

namespace crema {
namespace python {

// Blob, BlobVec, the layers of a net, Net.
void BindNet(pybind11::module_& m);
// Solver and its six types, get_solver.
void BindSolvers(pybind11::module_& m);
// Image reading and resizing for crema.io (builds with OpenCV).
void BindImages(pybind11::module_& m);
// Mean subtraction and scaling for crema.io.Transformer (DataTransformer's).
void BindTransformer(pybind11::module_& m);
// export_onnx (`crema export`; builds with ONNX).
void BindExport(pybind11::module_& m);
// evaluate_classifier (`crema test --labels`).
void BindEvaluation(pybind11::module_& m);

}  // namespace python
}  // namespace crema

#endif  // CREMA_PYTHON_BINDINGS_HPP_
