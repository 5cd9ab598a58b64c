// Which body runs a layer whose type has more than one: its reference body
// (the layer's own CPU and CUDA code) and the twins of the libraries the
// build has (oneDNN's in src/crema/dnnl/, cuDNN's in src/crema/cudnn/).
//
// Each such type has one ordered list of bodies, by name ("oneDNN", "cuDNN",
// "reference"), in layer_bodies.cpp; the reference body ends every list. A
// library's folder registers its bodies (LayerBodies::Add), each with the
// check that says whether it serves a layer, in the thread's mode, for the
// layer's data type and engine field, and why (either way). Making a layer
// walks its type's list: the first body that serves makes it, and the choice
// and the reasons of the bodies passed over are logged at verbose level 1
// (GLOG_v=1), here and nowhere else. Adding a library's body for a type is
// one file (its registration) and one name in that type's list.
//
// The engine field filters the list: CAFFE asks for the reference body, DNNL
// for oneDNN (CPU mode), CUDNN for cuDNN (GPU mode; the reference body in CPU
// mode, as in Caffe), DEFAULT for whatever serves first. A body the field
// names that cannot serve leaves the layer to its reference body, with a
// warning naming the layer and why. Under the net's engine_mode FASTEST (the
// default), the engine fields written for Caffe's runtimes read as DEFAULT
// before this (format/engine_hints.hpp).
//
// A twin may still leave a shape to the reference body when its pass is made
// (a shape its library cannot express; DEFAULT's measured rules for a shape,
// which it asks when its layer's engine is DEFAULT); it says so through
// LogBodyForShape.
#ifndef CREMA_LAYER_BODIES_HPP_
#define CREMA_LAYER_BODIES_HPP_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crema/common.hpp"
#include "crema/layer.hpp"

namespace crema {

// The engine a layer's parameter names. Every parameter message's Engine
// enum numbers its values alike (Caffe's DEFAULT 0, CAFFE 1, CUDNN 2;
// Crema's DNNL 10000); a number no message defines reads as DEFAULT.
enum class Engine { kDefault, kCaffe, kCudnn, kDnnl };
Engine ReadEngine(int value);
const char* EngineName(Engine engine);

// The engine param's type reads from its parameter message; DEFAULT for a
// type without a body list. SetEngine writes it (a type with a list, an
// engine its message's enum defines: Eltwise's has no CUDNN).
Engine EngineOf(const LayerParameter& param);
void SetEngine(LayerParameter* param, Engine engine);

// What a body is asked: the layer, the engine its parameter names, and the
// mode of the thread that builds the net.
struct BodyRequest {
  const LayerParameter& param;
  Engine engine;
  bool gpu;
};

// Whether a body serves a request, and why (or why not), for the log.
struct Verdict {
  bool serves;
  std::string why;
};

// The check of a library's body: it runs in GPU mode (gpu_only) or CPU mode
// only, serves the engine that names it (`own`: DNNL, CUDNN) always, DEFAULT
// where by_default (why: the measurement behind that, either way), and no
// other engine.
Verdict LibraryBodyServes(const BodyRequest& request, bool gpu_only, Engine own, bool by_default,
                          const std::string& why);

template <typename Dtype>
struct Body {
  std::function<Verdict(const BodyRequest&)> serves;
  std::function<std::shared_ptr<Layer<Dtype>>(const LayerParameter&)> make;
};

template <typename Dtype>
class LayerBodies {
 public:
  // Registers body under name in type's list (a name the list holds; at
  // load time, from the library's folder).
  static void Add(const std::string& type, const std::string& name, Body<Dtype> body);
  // Whether type has a body list; whether its body `name` is registered.
  static bool HasList(const std::string& type);
  static bool Has(const std::string& type, const std::string& name) {
    return Registry().count(std::make_pair(type, name)) > 0;
  }
  // The layer param asks for: made by the first body of its type's list
  // that serves, else by `reference` (the type's registered creator).
  static std::shared_ptr<Layer<Dtype>> Create(
      const LayerParameter& param,
      const std::function<std::shared_ptr<Layer<Dtype>>(const LayerParameter&)>& reference);
  // Each body of param's type's list, in order, with its answer to param in
  // the calling thread's mode (the reference body always serves).
  static std::vector<std::pair<std::string, Verdict>> Ask(const LayerParameter& param);

 private:
  static std::map<std::pair<std::string, std::string>, Body<Dtype>>& Registry();
};

template <typename Dtype>
struct BodyRegisterer {
  BodyRegisterer(const std::string& type, const std::string& name, Body<Dtype> body) {
    LayerBodies<Dtype>::Add(type, name, std::move(body));
  }
};

// A twin leaving a shape to its reference body, or taking it: one line at
// verbose level 1 naming the layer, the shape, the body and why.
void LogBodyForShape(const LayerParameter& param, const std::vector<int>& shape, const char* body,
                     const std::string& why);

}  // namespace crema

#endif  // CREMA_LAYER_BODIES_HPP_
