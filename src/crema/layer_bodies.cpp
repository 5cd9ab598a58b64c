#include "crema/layer_bodies.hpp"

#include <algorithm>
#include <sstream>

namespace crema {

namespace {

constexpr const char* kReference = "reference";

// The types with more than one body: the parameter message that holds each
// one's engine field, and its bodies in the order they are asked. The first
// that serves runs the layer.
struct BodyList {
  const char* type;
  const char* engine_message;
  std::vector<std::string> bodies;
};

const std::vector<BodyList>& BodyLists() {
  static const std::vector<BodyList> lists{
      {"Convolution", "convolution_param", {"oneDNN", "cuDNN", kReference}},
      {"DepthwiseConvolution", "convolution_param", {"oneDNN", kReference}},
      {"ConvolutionDepthwise", "convolution_param", {"oneDNN", kReference}},
      {"Deconvolution", "convolution_param", {"oneDNN", kReference}},
      {"Pooling", "pooling_param", {"oneDNN", "cuDNN", kReference}},
      {"InnerProduct", "inner_product_param", {"oneDNN", kReference}},
      {"BatchNorm", "batch_norm_param", {"oneDNN", "cuDNN", kReference}},
      {"ReLU", "relu_param", {"oneDNN", "cuDNN", kReference}},
      {"Sigmoid", "sigmoid_param", {"cuDNN", kReference}},
      {"TanH", "tanh_param", {"cuDNN", kReference}},
      {"LRN", "lrn_param", {"oneDNN", "cuDNN", kReference}},
      {"Softmax", "softmax_param", {"oneDNN", "cuDNN", kReference}},
      {"Eltwise", "eltwise_param", {"oneDNN", kReference}},
  };
  return lists;
}

// The engine field of `list`'s message (Invariant: every list names a
// message of LayerParameter that has an enum field `engine`).
const google::protobuf::FieldDescriptor* EngineField(const BodyList& list,
                                                     const google::protobuf::FieldDescriptor** message) {
  *message = LayerParameter::descriptor()->FindFieldByName(list.engine_message);
  CHECK(*message && (*message)->message_type()) << list.type << ": no " << list.engine_message;
  const google::protobuf::FieldDescriptor* engine =
      (*message)->message_type()->FindFieldByName("engine");
  CHECK(engine && engine->enum_type()) << list.engine_message << " has no engine enum";
  return engine;
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

int EngineNumber(Engine engine) {
  switch (engine) {
    case Engine::kCaffe:
      return 1;
    case Engine::kCudnn:
      return 2;
    case Engine::kDnnl:
      return 10000;
    case Engine::kDefault:
      break;
  }
  return 0;
}

Engine EngineOf(const LayerParameter& param) {
  const BodyList* list = FindList(param.type());
  if (!list) return Engine::kDefault;
  const google::protobuf::FieldDescriptor* message = nullptr;
  const google::protobuf::FieldDescriptor* engine = EngineField(*list, &message);
  const google::protobuf::Message& holder = param.GetReflection()->GetMessage(param, message);
  return ReadEngine(holder.GetReflection()->GetEnumValue(holder, engine));
}

void SetEngine(LayerParameter* param, Engine engine) {
  const BodyList* list = FindList(param->type());
  CHECK(list) << "SetEngine: type " << param->type() << " has no body list";
  const google::protobuf::FieldDescriptor* message = nullptr;
  const google::protobuf::FieldDescriptor* field = EngineField(*list, &message);
  google::protobuf::Message* holder = param->GetReflection()->MutableMessage(param, message);
  CHECK(field->enum_type()->FindValueByNumber(EngineNumber(engine)))
      << param->type() << ": " << list->engine_message << " has no engine " << EngineName(engine);
  holder->GetReflection()->SetEnumValue(holder, field, EngineNumber(engine));
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
  const BodyRequest request{param, EngineOf(param), Context::mode() == Context::GPU};
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
