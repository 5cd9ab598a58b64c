#include "crema/layer_bodies.hpp"

#include <algorithm>
#include <sstream>

namespace crema {

namespace {

constexpr const char* kReference = "reference";

// The types with more than one body: where each reads its engine, and its
// bodies in the order they are asked. The first that serves runs the layer.
struct BodyList {
  const char* type;
  int (*engine)(const LayerParameter& param);
  std::vector<std::string> bodies;
};

int ConvolutionEngine(const LayerParameter& p) { return p.convolution_param().engine(); }

const std::vector<BodyList>& BodyLists() {
  static const std::vector<BodyList> lists{
      {"Convolution", ConvolutionEngine, {"oneDNN", "cuDNN", kReference}},
      {"DepthwiseConvolution", ConvolutionEngine, {"oneDNN", kReference}},
      {"ConvolutionDepthwise", ConvolutionEngine, {"oneDNN", kReference}},
      {"Deconvolution", ConvolutionEngine, {"oneDNN", kReference}},
      {"Pooling",
       [](const LayerParameter& p) { return int(p.pooling_param().engine()); },
       {"oneDNN", "cuDNN", kReference}},
      {"InnerProduct",
       [](const LayerParameter& p) { return int(p.inner_product_param().engine()); },
       {"oneDNN", kReference}},
      {"BatchNorm",
       [](const LayerParameter& p) { return int(p.batch_norm_param().engine()); },
       {"oneDNN", "cuDNN", kReference}},
      {"ReLU",
       [](const LayerParameter& p) { return int(p.relu_param().engine()); },
       {"oneDNN", "cuDNN", kReference}},
      {"Sigmoid",
       [](const LayerParameter& p) { return int(p.sigmoid_param().engine()); },
       {"cuDNN", kReference}},
      {"TanH",
       [](const LayerParameter& p) { return int(p.tanh_param().engine()); },
       {"cuDNN", kReference}},
      {"LRN",
       [](const LayerParameter& p) { return int(p.lrn_param().engine()); },
       {"oneDNN", "cuDNN", kReference}},
      {"Softmax",
       [](const LayerParameter& p) { return int(p.softmax_param().engine()); },
       {"oneDNN", "cuDNN", kReference}},
      {"Eltwise",
       [](const LayerParameter& p) { return int(p.eltwise_param().engine()); },
       {"oneDNN", kReference}},
  };
  return lists;
}

const BodyList* FindList(const std::string& type) {
  for (const BodyList& list : BodyLists()) {
    if (type == list.type) return &list;
  }
  return nullptr;
}

// The library body the engine names in this mode ("" for none).
std::string NamedBody(Engine engine, bool gpu) {
  if (engine == Engine::kDnnl) return "oneDNN";
  if (engine == Engine::kCudnn && gpu) return "cuDNN";
  return "";
}

}  // namespace

Engine ReadEngine(int value) {
  switch (value) {
    case 1:
      return Engine::kCaffe;
    case 2:
      return Engine::kCudnn;
    case 10000:
      return Engine::kDnnl;
    default:
      return Engine::kDefault;
  }
}

const char* EngineName(Engine engine) {
  switch (engine) {
    case Engine::kCaffe:
      return "CAFFE";
    case Engine::kCudnn:
      return "CUDNN";
    case Engine::kDnnl:
      return "DNNL";
    case Engine::kDefault:
      break;
  }
  return "DEFAULT";
}

Engine EngineOf(const LayerParameter& param) {
  const BodyList* list = FindList(param.type());
  return list ? ReadEngine(list->engine(param)) : Engine::kDefault;
}

Verdict LibraryBodyServes(const BodyRequest& request, bool gpu_only, Engine own, bool by_default,
                          const std::string& why) {
  if (request.gpu != gpu_only) return Verdict{false, gpu_only ? "GPU mode only" : "CPU mode only"};
  if (request.engine == own) return Verdict{true, std::string("engine ") + EngineName(own)};
  if (request.engine != Engine::kDefault) {
    return Verdict{false, std::string("engine ") + EngineName(request.engine)};
  }
  return Verdict{by_default, "DEFAULT: " + why};
}

void LogBodyForShape(const LayerParameter& param, const std::vector<int>& shape, const char* body,
                     const std::string& why) {
  std::ostringstream dims;
  for (size_t i = 0; i < shape.size(); ++i) dims << (i ? " " : "") << shape[i];
  VLOG(1) << "layer '" << param.name() << "' (" << param.type() << "), bottom [" << dims.str()
          << "]: " << body << " (" << why << ")";
}

template <typename Dtype>
std::map<std::pair<std::string, std::string>, Body<Dtype>>& LayerBodies<Dtype>::Registry() {
  static std::map<std::pair<std::string, std::string>, Body<Dtype>>
      registry;  // read-only after load
  return registry;
}

template <typename Dtype>
void LayerBodies<Dtype>::Add(const std::string& type, const std::string& name, Body<Dtype> body) {
  // Invariants, checked when the library loads: the name is in the type's
  // list, and registered once.
  const BodyList* list = FindList(type);
  CHECK(list) << "body " << name << " registered for " << type << ", which has no body list";
  CHECK(std::find(list->bodies.begin(), list->bodies.end(), name) != list->bodies.end())
      << "body " << name << " is not in the list of " << type;
  CHECK(Registry().emplace(std::make_pair(type, name), std::move(body)).second)
      << "body " << name << " of " << type << " registered twice";
}

template <typename Dtype>
bool LayerBodies<Dtype>::HasList(const std::string& type) {
  return FindList(type) != nullptr;
}

template <typename Dtype>
std::vector<std::pair<std::string, Verdict>> LayerBodies<Dtype>::Ask(const LayerParameter& param) {
  std::vector<std::pair<std::string, Verdict>> answers;
  const BodyList* list = FindList(param.type());
  if (!list) return answers;
  const BodyRequest request{param, ReadEngine(list->engine(param)),
                            Context::mode() == Context::GPU};
  for (const std::string& name : list->bodies) {
    if (name == kReference) {
      answers.emplace_back(
          name, Verdict{true, request.engine == Engine::kCaffe ? "engine CAFFE"
                                                               : "the layer's own body"});
      continue;
    }
    const auto found = Registry().find(std::make_pair(param.type(), name));
    answers.emplace_back(name, found == Registry().end() ? Verdict{false, "not in this build"}
                                                         : found->second.serves(request));
  }
  return answers;
}

template <typename Dtype>
std::shared_ptr<Layer<Dtype>> LayerBodies<Dtype>::Create(
    const LayerParameter& param,
    const std::function<std::shared_ptr<Layer<Dtype>>(const LayerParameter&)>& reference) {
  const Engine engine = EngineOf(param);
  const bool gpu = Context::mode() == Context::GPU;
  std::string passed_over;
  std::string named_why;
  const std::string named = NamedBody(engine, gpu);
  for (const auto& answer : Ask(param)) {
    const std::string& name = answer.first;
    const Verdict& verdict = answer.second;
    if (verdict.serves) {
      VLOG(1) << "layer '" << param.name() << "' (" << param.type() << "), engine "
              << EngineName(engine) << ", " << (gpu ? "GPU" : "CPU") << " mode: " << name
              << " body (" << verdict.why << ")" << (passed_over.empty() ? "" : "; passed over: ")
              << passed_over;
      if (name != kReference) return Registry().at(std::make_pair(param.type(), name)).make(param);
      LOG_IF(WARNING, !named.empty())
          << "layer '" << param.name() << "': engine " << EngineName(engine) << " asks for "
          << named << ", which cannot serve it ("
          << (named_why.empty() ? "not in its list" : named_why) << "); the reference body runs";
      return reference(param);
    }
    passed_over += (passed_over.empty() ? "" : ", ") + name + " (" + verdict.why + ")";
    if (name == named) named_why = verdict.why;
  }
  return reference(param);  // unreachable: every list ends with the reference body
}

template class LayerBodies<float>;
template class LayerBodies<double>;

}  // namespace crema
