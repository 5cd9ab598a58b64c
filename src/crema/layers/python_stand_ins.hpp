// Native stand-ins for Python layers that published nets declare (Faster
// R-CNN's proposal layer): a "Python" layer whose python_param names a
// (module, layer) listed here is built, with or without Python, as the native
// layer that the stand-in's translation describes (LayerRegistry::CreateLayer
// asks this table first, so the stand-in wins over a Python module of that
// name). Each stand-in registers itself beside its native layer
// (REGISTER_PYTHON_STAND_IN).
#ifndef CREMA_LAYERS_PYTHON_STAND_INS_HPP_
#define CREMA_LAYERS_PYTHON_STAND_INS_HPP_

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "crema/proto/crema.pb.h"

namespace crema {

class PythonStandIns {
 public:
  // The native layer's parameters from the Python layer's (param_str read);
  // throws an Error when param_str is not understood.
  using Translation = std::function<LayerParameter(const LayerParameter&)>;

  static void Add(const std::string& module, const std::string& layer, Translation translation);
  // The translation for python_param's (module, layer), or null.
  static const Translation* Find(const PythonParameter& python_param);

 private:
  static std::map<std::pair<std::string, std::string>, Translation>& Table();
};

struct PythonStandInRegisterer {
  PythonStandInRegisterer(const std::string& module, const std::string& layer,
                          PythonStandIns::Translation translation) {
    PythonStandIns::Add(module, layer, std::move(translation));
  }
};

// Registers translation (LayerParameter(const LayerParameter&)) as the
// stand-in for Python layer class `layer` of module `module`.
#define REGISTER_PYTHON_STAND_IN(name, module, layer, translation) \
  static ::crema::PythonStandInRegisterer g_python_stand_in_##name(module, layer, translation)

}  // namespace crema

#endif  // CREMA_LAYERS_PYTHON_STAND_INS_HPP_
