// Which body runs a layer that has an engine choice: oneDNN's primitives or
// Crema's reference body. oneDNN serves CPU mode and float data in builds
// that have it; a layer asking for DNNL elsewhere runs its reference body (a
// prototxt stays portable) and says so in the log.
//
// Engine DEFAULT picks, per layer type, the body measured faster on CPUs
// (scripts/bench/engines.sh): oneDNN for LRN and Softmax; for Convolution,
// Pooling and ReLU the oneDNN layer deciding per shape (DnnlConvolutionLayer:
// where oneDNN's blocked layouts pay, but not for pointwise kernels;
// DnnlPoolingLayer: all but 2x2 max windows at stride 2; DnnlReLULayer: large
// blobs) and the reference body elsewhere; for InnerProduct the oneDNN layer
// running the reference body in float (oneDNN's weight gradient is slower on
// AlexNet's) and oneDNN in bf16; the reference body for Eltwise (its
// one-pass sum took 13-17 ms per ResNet-50 step forward against oneDNN's
// 19-20), Deconvolution and BatchNorm (not measured on a net yet).
// CAFFE (and CUDNN) always run the reference body.
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

enum class EngineBody {
  kReference,
  kDnnl,             // asked for: oneDNN wherever it can serve
  kDnnlWhereFaster,  // DEFAULT: oneDNN where the layer knows it is faster (for
                     // layers without a per-shape choice: wherever it serves)
};

template <typename Dtype, template <typename> class Reference, template <typename> class Dnnl>
std::shared_ptr<Layer<Dtype>> CreateForEngine(const LayerParameter& param, EngineBody body) {
  if constexpr (kDnnlBuilt && std::is_same<Dtype, float>::value) {
    if (body != EngineBody::kReference && Context::mode() == Context::CPU) {
      // A layer that chooses per shape takes the choice; the others always
      // run oneDNN when made.
      if constexpr (std::is_constructible<Dnnl<Dtype>, const LayerParameter&, bool>::value) {
        return std::make_shared<Dnnl<Dtype>>(param, body == EngineBody::kDnnlWhereFaster);
      } else {
        return std::make_shared<Dnnl<Dtype>>(param);
      }
    }
  }
  LOG_IF(WARNING, body == EngineBody::kDnnl)
      << "layer '" << param.name()
      << "': engine DNNL needs a oneDNN build, CPU mode and float data; the reference body runs";
  return std::make_shared<Reference<Dtype>>(param);
}

}  // namespace crema

// Registers type##Layer with its oneDNN twin Dnnl##type##Layer, chosen by the
// engine field of the layer's `param_field` (a message of type `Message`);
// `default_body` is what DEFAULT means for the type.
#define REGISTER_LAYER_WITH_ENGINE(type, param_field, Message, default_body)              \
  template <typename Dtype>                                                               \
  std::shared_ptr<::crema::Layer<Dtype>> Creator_##type##Layer(                           \
      const ::crema::LayerParameter& param) {                                             \
    const auto engine = param.param_field().engine();                                     \
    const ::crema::EngineBody body = engine == Message::DNNL ? ::crema::EngineBody::kDnnl \
                                     : engine == Message::DEFAULT                         \
                                         ? (default_body)                                 \
                                         : ::crema::EngineBody::kReference;               \
    return ::crema::CreateForEngine<Dtype, type##Layer, Dnnl##type##Layer>(param, body);  \
  }                                                                                       \
  REGISTER_LAYER_CREATOR(type, Creator_##type##Layer)

#endif  // CREMA_ENGINE_HPP_
