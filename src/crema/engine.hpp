// Which body runs a layer that has an engine choice. In CPU mode: oneDNN's
// primitives (the twins of src/crema/dnnl/, float data) or Crema's reference
// body; in GPU mode: cuDNN (the twins of src/crema/cudnn/) or the layer's
// CUDA body. Each engine folder is built only with its library and registers
// its twins here; a layer asking for an engine its build or mode lacks runs
// its reference (CPU or CUDA) body, so a prototxt stays portable, and says so
// in the log.
//
// The engine field, as the net's engine_mode AS_WRITTEN takes it (under the
// default FASTEST, format/engine_hints.hpp first reads CAFFE, CUDNN and
// Intel's values as DEFAULT):
//   DEFAULT  CPU mode: what src/crema/dnnl/default_policy.hpp says, type by
//            type and shape by shape (the reference body where oneDNN is not
//            built); GPU mode: the cuDNN twin where the build has one.
//   CAFFE    the reference body.
//   CUDNN    GPU mode: the cuDNN twin; CPU mode: the reference body, as in Caffe.
//   DNNL     CPU mode: the oneDNN twin wherever it can serve; GPU mode: the
//            CUDA body.
#ifndef CREMA_ENGINE_HPP_
#define CREMA_ENGINE_HPP_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "crema/common.hpp"
#include "crema/layer.hpp"
#include "crema/layer_factory.hpp"

namespace crema {

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

// The libraries whose twins an engine folder registers.
enum class TwinLibrary { kDnnl, kCudnn };

// The twins of the build, by library and layer type. A twin derives from the
// reference layer of its type; `for_default` says engine DEFAULT made it (it
// then runs its library only where the default policy says so).
template <typename Dtype>
class TwinLayers {
 public:
  using Creator =
      std::function<std::shared_ptr<Layer<Dtype>>(const LayerParameter& param, bool for_default)>;
  static void Add(TwinLibrary library, const std::string& type, Creator creator);
  // The creator of type's twin on the library, or an empty function.
  static Creator Find(TwinLibrary library, const std::string& type);
  static bool Has(TwinLibrary library, const std::string& type) {
    return static_cast<bool>(Find(library, type));
  }

 private:
  static std::map<std::pair<TwinLibrary, std::string>, Creator>& Registry();
};

template <typename Dtype>
struct TwinRegisterer {
  TwinRegisterer(TwinLibrary library, const std::string& type,
                 typename TwinLayers<Dtype>::Creator creator) {
    TwinLayers<Dtype>::Add(library, type, std::move(creator));
  }
};

// The layer `param` asks for through its engine, in the calling thread's mode.
template <typename Dtype, template <typename> class Reference>
std::shared_ptr<Layer<Dtype>> CreateForEngine(const LayerParameter& param, RequestedEngine engine) {
  const bool gpu = Context::mode() == Context::GPU;
  const TwinLibrary library = gpu ? TwinLibrary::kCudnn : TwinLibrary::kDnnl;
  const bool asks_twin = engine == RequestedEngine::kDefault ||
                         engine == (gpu ? RequestedEngine::kCudnn : RequestedEngine::kDnnl);
  if (asks_twin) {
    if (const auto creator = TwinLayers<Dtype>::Find(library, param.type())) {
      return creator(param, engine == RequestedEngine::kDefault);
    }
  }
  LOG_IF(WARNING, gpu && engine == RequestedEngine::kCudnn)
      << "layer '" << param.name()
      << "': engine CUDNN needs a build with cuDNN (CREMA_CUDNN); the CUDA body runs";
  LOG_IF(WARNING, engine == RequestedEngine::kDnnl)
      << "layer '" << param.name()
      << "': engine DNNL needs a oneDNN build, CPU mode and float data; the reference body runs";
  return std::make_shared<Reference<Dtype>>(param);
}

}  // namespace crema

// Registers type##Layer, whose body the engine field of `param_field`
// chooses (CreateForEngine).
#define REGISTER_LAYER_WITH_ENGINES(type, param_field)             \
  template <typename Dtype>                                        \
  std::shared_ptr<::crema::Layer<Dtype>> Creator_##type##Layer(    \
      const ::crema::LayerParameter& param) {                      \
    return ::crema::CreateForEngine<Dtype, type##Layer>(           \
        param, ::crema::ReadEngine(param.param_field().engine())); \
  }                                                                \
  REGISTER_LAYER_CREATOR(type, Creator_##type##Layer)

// In src/crema/cudnn/: registers Cudnn##type##Layer as type's cuDNN twin
// (float and double).
#define REGISTER_CUDNN_LAYER(type)                                                             \
  template <typename Dtype>                                                                    \
  std::shared_ptr<::crema::Layer<Dtype>> CudnnCreator_##type##Layer(                           \
      const ::crema::LayerParameter& param, bool) {                                            \
    return std::make_shared<Cudnn##type##Layer<Dtype>>(param);                                 \
  }                                                                                            \
  static ::crema::TwinRegisterer<float> g_cudnn_f_##type(::crema::TwinLibrary::kCudnn, #type,  \
                                                         CudnnCreator_##type##Layer<float>);   \
  static ::crema::TwinRegisterer<double> g_cudnn_d_##type(::crema::TwinLibrary::kCudnn, #type, \
                                                          CudnnCreator_##type##Layer<double>)

// In src/crema/dnnl/: registers Dnnl##type##Layer as type's oneDNN twin
// (float). Engine DEFAULT makes it only where the default policy lets oneDNN
// serve the type (DefaultMakesDnnlTwin), else the reference layer.
#define REGISTER_DNNL_LAYER(type)                                                         \
  std::shared_ptr<::crema::Layer<float>> DnnlCreator_##type##Layer(                       \
      const ::crema::LayerParameter& param, bool for_default) {                           \
    if (for_default && !::crema::DefaultMakesDnnlTwin(#type)) {                           \
      return std::make_shared<type##Layer<float>>(param);                                 \
    }                                                                                     \
    return std::make_shared<Dnnl##type##Layer<float>>(param, for_default);                \
  }                                                                                       \
  static ::crema::TwinRegisterer<float> g_dnnl_##type(::crema::TwinLibrary::kDnnl, #type, \
                                                      DnnlCreator_##type##Layer)

#endif  // CREMA_ENGINE_HPP_
