// crema.evaluate_classifier: the numbers `crema test --labels` prints, from
// the same code (crema/evaluation.hpp), as a dict of numpy arrays and floats.
#include "crema/evaluation.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>

#include "bindings.hpp"

namespace py = pybind11;

namespace crema {
namespace python {

namespace {

py::dict Evaluate(Net<float>& net, int iterations, int top_k) {
  std::unique_ptr<ConfusionMatrix> matrix;
  {
    py::gil_scoped_release release;  // forward passes; a Python layer takes the GIL back
    matrix.reset(new ConfusionMatrix(EvaluateClassifier(&net, iterations, top_k)));
  }
  const int k = matrix->classes();
  py::array_t<int64_t> confusion({k, k});
  py::array_t<double> per_class(k);
  auto counts = confusion.mutable_unchecked<2>();
  auto shares = per_class.mutable_unchecked<1>();
  for (int t = 0; t < k; ++t) {
    shares(t) = matrix->class_accuracy(t);
    for (int p = 0; p < k; ++p) counts(t, p) = matrix->count(t, p);
  }
  py::dict result;
  result["confusion"] = confusion;
  result["per_class_accuracy"] = per_class;
  result["accuracy"] = matrix->accuracy();
  result["top_k"] = matrix->top_k();
  result["top_k_accuracy"] = matrix->top_k_accuracy();
  result["samples"] = matrix->total();
  return result;
}

}  // namespace

void BindEvaluation(py::module_& m) {
  m.def("evaluate_classifier", &Evaluate, py::arg("net"), py::arg("iterations"),
        py::arg("top_k") = 5,
        "Runs iterations forward passes of a TEST net and scores the bottoms of its first "
        "Accuracy layer, as `crema test --labels` does: a dict of confusion (a row per true "
        "class, a column per predicted one), per_class_accuracy, accuracy, top_k, "
        "top_k_accuracy and samples.");
}

}  // namespace python
}  // namespace crema
