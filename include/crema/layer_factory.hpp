// The layer registry: each layer type registers a creator under its type
// string at the bottom of its own .cpp (REGISTER_LAYER_CLASS), so adding a
// layer touches no central list.
#ifndef CREMA_LAYER_FACTORY_HPP_
#define CREMA_LAYER_FACTORY_HPP_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

template <typename Dtype>
class Layer;

template <typename Dtype>
class LayerRegistry {
 public:
  using Creator = std::function<std::shared_ptr<Layer<Dtype>>(const LayerParameter&)>;

  static void AddCreator(const std::string& type, Creator creator);
  // Creates the layer param.type() names; an unknown type is a user error
  // naming the layer, the type and the known types. A "Python" layer whose
  // module and class have a native stand-in (src/crema/layers/
  // python_stand_ins.hpp) is created as that native layer.
  static std::shared_ptr<Layer<Dtype>> CreateLayer(const LayerParameter& param);
  static std::vector<std::string> LayerTypeList();
  static bool IsRegistered(const std::string& type);

 private:
  static std::map<std::string, Creator>& Registry();
};

template <typename Dtype>
struct LayerRegisterer {
  LayerRegisterer(const std::string& type, typename LayerRegistry<Dtype>::Creator creator) {
    LayerRegistry<Dtype>::AddCreator(type, std::move(creator));
  }
};

#define REGISTER_LAYER_CREATOR(type, creator)                                           \
  static ::crema::LayerRegisterer<float> g_creator_f_##type(#type, creator<float>);   \
  static ::crema::LayerRegisterer<double> g_creator_d_##type(#type, creator<double>)

// Registers type##Layer under the type string #type.
#define REGISTER_LAYER_CLASS(type)                                                      \
  template <typename Dtype>                                                             \
  std::shared_ptr<::crema::Layer<Dtype>> Creator_##type##Layer(                         \
      const ::crema::LayerParameter& param) {                                           \
    return std::shared_ptr<::crema::Layer<Dtype>>(new type##Layer<Dtype>(param));       \
  }                                                                                     \
  REGISTER_LAYER_CREATOR(type, Creator_##type##Layer)

}  // namespace crema

#endif  // CREMA_LAYER_FACTORY_HPP_
