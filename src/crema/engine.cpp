#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
std::map<std::string, typename CudnnLayers<Dtype>::Creator>& CudnnLayers<Dtype>::Registry() {
  static std::map<std::string, Creator> registry;  // built at load time, read-only after
  return registry;
}

template <typename Dtype>
void CudnnLayers<Dtype>::Add(const std::string& type, Creator creator) {
  CHECK(Registry().emplace(type, std::move(creator)).second)
      << "cuDNN layer type " << type << " registered twice";
}

template <typename Dtype>
typename CudnnLayers<Dtype>::Creator CudnnLayers<Dtype>::Find(const std::string& type) {
  const auto found = Registry().find(type);
  return found == Registry().end() ? Creator() : found->second;
}

template class CudnnLayers<float>;
template class CudnnLayers<double>;

}  // namespace crema
