// Which body runs a layer that has an engine choice: oneDNN's primitives
// (engine DNNL) or Crema's reference body. oneDNN serves CPU mode and float
// data in builds that have it; a layer asking for DNNL elsewhere runs its
// reference body (a prototxt stays portable) and says so once in the log.
#ifndef CREMA_ENGINE_HPP_
#define CREMA_ENGINE_HPP_

#include <memory>
#include <type_traits>

#include "crema/common.hpp"
#include "crema/layer.hpp"
#include "crema/layer_factory.hpp"

namespace crema {

#ifdef CREMA_DNNL
inline constexpr bool kDnnlBuilt = true;
#else
inline constexpr bool kDnnlBuilt = false;
#endif

// `dnnl_asked`: the layer's engine is DNNL.
template <typename Dtype, template <typename> class Reference, template <typename> class Dnnl>
std::shared_ptr<Layer<Dtype>> CreateForEngine(const LayerParameter& param, bool dnnl_asked) {
  if constexpr (kDnnlBuilt && std::is_same<Dtype, float>::value) {
    if (dnnl_asked && Context::mode() == Context::CPU) return std::make_shared<Dnnl<Dtype>>(param);
  }
  LOG_IF(WARNING, dnnl_asked) << "layer '" << param.name()
                              << "': engine DNNL needs a oneDNN build, CPU mode and float data; "
                                 "the reference body runs";
  return std::make_shared<Reference<Dtype>>(param);
}

}  // namespace crema

// Registers type##Layer with its oneDNN twin Dnnl##type##Layer, chosen by the
// engine field of the layer's `param_field` (a message of type `Message`).
#define REGISTER_LAYER_WITH_ENGINE(type, param_field, Message)              \
  template <typename Dtype>                                                 \
  std::shared_ptr<::crema::Layer<Dtype>> Creator_##type##Layer(             \
      const ::crema::LayerParameter& param) {                               \
    return ::crema::CreateForEngine<Dtype, type##Layer, Dnnl##type##Layer>( \
        param, param.param_field().engine() == Message::DNNL);              \
  }                                                                         \
  REGISTER_LAYER_CREATOR(type, Creator_##type##Layer)

#endif  // CREMA_ENGINE_HPP_
