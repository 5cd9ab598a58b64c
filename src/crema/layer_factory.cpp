#include "crema/layer_factory.hpp"

#include <string>
#include <vector>

#include "crema/layer.hpp"
#include "crema/layer_bodies.hpp"
#include "crema/layers/python_stand_ins.hpp"

namespace crema {

template <typename Dtype>
std::map<std::string, typename LayerRegistry<Dtype>::Creator>& LayerRegistry<Dtype>::Registry() {
  static std::map<std::string, Creator> registry;
  return registry;
}

template <typename Dtype>
void LayerRegistry<Dtype>::AddCreator(const std::string& type, Creator creator) {
  // Invariant: each type registers once, from its own file, when the library loads.
  CHECK_EQ(Registry().count(type), 0u) << "layer type " << type << " registered twice";
  Registry()[type] = std::move(creator);
}

template <typename Dtype>
std::shared_ptr<Layer<Dtype>> LayerRegistry<Dtype>::CreateLayer(const LayerParameter& param) {
  if (param.type() == "Python") {
    const PythonStandIns::Translation* stand_in = PythonStandIns::Find(param.python_param());
    if (stand_in) return CreateLayer((*stand_in)(param));
  }
  auto it = Registry().find(param.type());
  if (it == Registry().end()) {
    std::string known;
    for (const auto& type : LayerTypeList()) known += (known.empty() ? "" : ", ") + type;
    CREMA_FAIL("layer '" << param.name() << "': unknown layer type '" << param.type()
                         << "' (known types: " << known << ")");
  }
  // A type with several bodies (a reference body and libraries' twins) asks
  // its body list; the registered creator is its reference body.
  if (LayerBodies<Dtype>::HasList(param.type()))
    return LayerBodies<Dtype>::Create(param, it->second);
  return it->second(param);
}

template <typename Dtype>
std::vector<std::string> LayerRegistry<Dtype>::LayerTypeList() {
  std::vector<std::string> types;
  for (const auto& entry : Registry()) types.push_back(entry.first);
  return types;
}

template <typename Dtype>
bool LayerRegistry<Dtype>::IsRegistered(const std::string& type) {
  return Registry().count(type) > 0;
}

template class LayerRegistry<float>;
template class LayerRegistry<double>;

}  // namespace crema
