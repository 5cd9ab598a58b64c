// Which body runs a layer that has an engine choice. In CPU mode: oneDNN's
// primitives or Crema's reference body; in GPU mode: cuDNN or the layer's
// CUDA body. oneDNN serves CPU mode and float data in builds that have it;
// cuDNN serves GPU mode in builds that have it (float and double). A layer
// asking for an engine its build or mode lacks runs its reference (CPU or
// CUDA) body, so a prototxt stays portable, and says so in the log.
//
// Engine DEFAULT picks, per layer type, the body measured faster on CPUs
// (scripts/bench/engines.sh): oneDNN for Softmax, and for LRN across
// channels in a TEST-phase net's forward pass; for Convolution,
// Pooling and ReLU the oneDNN layer deciding per shape (DnnlConvolutionLayer:
// where oneDNN's blocked layouts pay, but not for pointwise kernels;
// DnnlPoolingLayer: all but 2x2 max windows at stride 2; DnnlReLULayer: large
// blobs) and the reference body elsewhere; for InnerProduct the oneDNN layer
// running the reference body in float (oneDNN's weight gradient is slower on
// AlexNet's) and oneDNN in bf16; the reference body for Eltwise (its
// one-pass sum took 13-17 ms per ResNet-50 step forward against oneDNN's
// 19-20), Deconvolution and BatchNorm (not measured on a net yet).
// In GPU mode DEFAULT picks the cuDNN layer wherever the type has one
// (Convolution, Pooling, ReLU, Sigmoid, TanH, Softmax, LRN, BatchNorm); the
// cuDNN layer itself runs the CUDA body on the settings cuDNN does not
// compute as Caffe does (src/crema/cudnn/).
// CAFFE always runs the reference body; CUDNN runs the reference body in CPU
// mode, as in Caffe.
#ifndef CREMA_ENGINE_HPP_
#define CREMA_ENGINE_HPP_

#include <map>
#include <memory>
#include <string>
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

// The engine a layer's parameter names. Every parameter message's Engine
// enum numbers its values alike (Caffe's DEFAULT 0, CAFFE 1, CUDNN 2;
// Crema's DNNL 10000); a number no message defines reads as DEFAULT.
enum class RequestedEngine { kDefault, kCaffe, kCudnn, kDnnl };

inline RequestedEngine ReadEngine(int value) {
  switch (value) {
    case 1:
      return RequestedEngine::kCaffe;
    case 2:
      return RequestedEngine::kCudnn;
    case 10000:
      return RequestedEngine::kDnnl;
    default:
      return RequestedEngine::kDefault;
  }
}

// What engine DEFAULT means in CPU mode for a layer type with a oneDNN twin.
enum class EngineBody {
  kReference,
  kDnnl,             // asked for: oneDNN wherever it can serve
  kDnnlWhereFaster,  // DEFAULT: oneDNN where the layer knows it is faster (for
                     // layers without a per-shape choice: wherever it serves)
};

// The cuDNN layers of the build, by layer type: src/crema/cudnn/ registers
// them (REGISTER_CUDNN_LAYER) when the build has cuDNN; otherwise there are
// none.
template <typename Dtype>
class CudnnLayers {
 public:
  using Creator = typename LayerRegistry<Dtype>::Creator;
  static void Add(const std::string& type, Creator creator);
  // The creator of type's cuDNN layer, or an empty function.
  static Creator Find(const std::string& type);
  static bool Has(const std::string& type) { return static_cast<bool>(Find(type)); }

 private:
  static std::map<std::string, Creator>& Registry();
};

template <typename Dtype>
struct CudnnLayerRegisterer {
  CudnnLayerRegisterer(const std::string& type, typename CudnnLayers<Dtype>::Creator creator) {
    CudnnLayers<Dtype>::Add(type, std::move(creator));
  }
};

// The layer for GPU mode: the cuDNN layer of the type for engines DEFAULT and
// CUDNN where the build has one, else the reference layer (its CUDA body).
template <typename Dtype, template <typename> class Reference>
std::shared_ptr<Layer<Dtype>> CreateForGpu(const LayerParameter& param, RequestedEngine engine) {
  if (engine == RequestedEngine::kDefault || engine == RequestedEngine::kCudnn) {
    if (const auto creator = CudnnLayers<Dtype>::Find(param.type())) return creator(param);
  }
  LOG_IF(WARNING, engine == RequestedEngine::kCudnn)
      << "layer '" << param.name()
      << "': engine CUDNN needs a build with cuDNN (CREMA_CUDNN); the CUDA body runs";
  LOG_IF(WARNING, engine == RequestedEngine::kDnnl)
      << "layer '" << param.name()
      << "': engine DNNL serves CPU mode only; in GPU mode the CUDA body runs";
  return std::make_shared<Reference<Dtype>>(param);
}

template <typename Dtype, template <typename> class Reference, template <typename> class Dnnl>
std::shared_ptr<Layer<Dtype>> CreateForEngine(const LayerParameter& param, RequestedEngine engine,
                                              EngineBody default_body) {
  if (Context::mode() == Context::GPU) return CreateForGpu<Dtype, Reference>(param, engine);
  const EngineBody body = engine == RequestedEngine::kDnnl      ? EngineBody::kDnnl
                          : engine == RequestedEngine::kDefault ? default_body
                                                                : EngineBody::kReference;
  if constexpr (kDnnlBuilt && std::is_same<Dtype, float>::value) {
    if (body != EngineBody::kReference) {
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

// Registers type##Layer with its oneDNN twin Dnnl##type##Layer (and, through
// CudnnLayers, its cuDNN layer), chosen by the engine field of the layer's
// `param_field`; `default_body` is what DEFAULT means for the type in CPU mode.
#define REGISTER_LAYER_WITH_ENGINE(type, param_field, default_body)                \
  template <typename Dtype>                                                        \
  std::shared_ptr<::crema::Layer<Dtype>> Creator_##type##Layer(                    \
      const ::crema::LayerParameter& param) {                                      \
    return ::crema::CreateForEngine<Dtype, type##Layer, Dnnl##type##Layer>(        \
        param, ::crema::ReadEngine(param.param_field().engine()), (default_body)); \
  }                                                                                \
  REGISTER_LAYER_CREATOR(type, Creator_##type##Layer)

// Registers type##Layer, which has no oneDNN twin: its reference body in CPU
// mode, and in GPU mode its cuDNN layer where the build has one.
#define REGISTER_LAYER_WITH_CUDNN_ENGINE(type, param_field)          \
  template <typename Dtype>                                          \
  std::shared_ptr<::crema::Layer<Dtype>> Creator_##type##Layer(      \
      const ::crema::LayerParameter& param) {                        \
    if (::crema::Context::mode() == ::crema::Context::GPU) {         \
      return ::crema::CreateForGpu<Dtype, type##Layer>(              \
          param, ::crema::ReadEngine(param.param_field().engine())); \
    }                                                                \
    return std::make_shared<type##Layer<Dtype>>(param);              \
  }                                                                  \
  REGISTER_LAYER_CREATOR(type, Creator_##type##Layer)

// In src/crema/cudnn/: registers Cudnn##type##Layer as type's cuDNN layer.
#define REGISTER_CUDNN_LAYER(type)                                                                 \
  template <typename Dtype>                                                                        \
  std::shared_ptr<::crema::Layer<Dtype>> CudnnCreator_##type##Layer(                               \
      const ::crema::LayerParameter& param) {                                                      \
    return std::make_shared<Cudnn##type##Layer<Dtype>>(param);                                     \
  }                                                                                                \
  static ::crema::CudnnLayerRegisterer<float> g_cudnn_f_##type(#type,                              \
                                                               CudnnCreator_##type##Layer<float>); \
  static ::crema::CudnnLayerRegisterer<double> g_cudnn_d_##type(                                   \
      #type, CudnnCreator_##type##Layer<double>)

#endif  // CREMA_ENGINE_HPP_
