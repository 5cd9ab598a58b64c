#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
std::map<std::pair<TwinLibrary, std::string>, typename TwinLayers<Dtype>::Creator>&
TwinLayers<Dtype>::Registry() {
  static std::map<std::pair<TwinLibrary, std::string>, Creator> registry;  // read-only after load
  return registry;
}

template <typename Dtype>
void TwinLayers<Dtype>::Add(TwinLibrary library, const std::string& type, Creator creator) {
  CHECK(Registry().emplace(std::make_pair(library, type), std::move(creator)).second)
      << "twin of layer type " << type << " registered twice";
}

template <typename Dtype>
typename TwinLayers<Dtype>::Creator TwinLayers<Dtype>::Find(TwinLibrary library,
                                                            const std::string& type) {
  const auto found = Registry().find(std::make_pair(library, type));
  return found == Registry().end() ? Creator() : found->second;
}

template class TwinLayers<float>;
template class TwinLayers<double>;

}  // namespace crema
