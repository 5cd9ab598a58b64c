// Each layer type with several bodies asks its one ordered list
// (layer_bodies.hpp), and the engine field picks the body: DNNL gives the
// oneDNN layer (CPU mode, float), CAFFE the reference one, DEFAULT the one its
// type prefers (the oneDNN layer where it is faster for some shapes, deciding
// per shape), and double data always a reference layer, for each of the
// layer types with a oneDNN twin. In CPU mode, CUDNN (Caffe's GPU engine)
// gives the reference layer in every build.
#include <gtest/gtest.h>

#include <string>
#include <typeinfo>
#include <vector>

#include "crema/dnnl/dnnl_batch_norm_layer.hpp"
#include "crema/dnnl/dnnl_conv_layer.hpp"
#include "crema/dnnl/dnnl_deconv_layer.hpp"
#include "crema/dnnl/dnnl_eltwise_layer.hpp"
#include "crema/dnnl/dnnl_inner_product_layer.hpp"
#include "crema/dnnl/dnnl_lrn_layer.hpp"
#include "crema/dnnl/dnnl_pooling_layer.hpp"
#include "crema/dnnl/dnnl_relu_layer.hpp"
#include "crema/dnnl/dnnl_softmax_layer.hpp"
#include "crema/layer_bodies.hpp"
#include "crema/layer_factory.hpp"
#include "crema/layers/batch_norm_layer.hpp"
#include "crema/layers/conv_layer.hpp"
#include "crema/layers/lrn_layer.hpp"
#include "crema/layers/pooling_layer.hpp"
#include "crema/layers/relu_layer.hpp"
#include "crema/layers/sigmoid_layer.hpp"
#include "crema/layers/softmax_layer.hpp"
#include "crema/layers/tanh_layer.hpp"
#include "crema/net.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter ParseLayer(const std::string& text) {
  LayerParameter param;
  ReadProtoFromString(text, "layer", &param);
  return param;
}

std::vector<std::string> Names(const std::vector<std::pair<std::string, Verdict>>& answers) {
  std::vector<std::string> names;
  for (const auto& answer : answers) names.push_back(answer.first);
  return names;
}

// A Convolution's list, in order, with each body's answer on a CPU.
TEST(LayerBodiesTest, ConvolutionAsksItsListInOrder) {
  Context::set_mode(Context::CPU);
  const auto answers = LayerBodies<float>::Ask(ParseLayer(
      "name: 'c' type: 'Convolution' convolution_param { num_output: 1 kernel_size: 3 }"));
  ASSERT_EQ(Names(answers), (std::vector<std::string>{"oneDNN", "cuDNN", "reference"}));
#ifdef CREMA_DNNL
  EXPECT_TRUE(answers[0].second.serves);
  EXPECT_NE(answers[0].second.why.find("DEFAULT"), std::string::npos) << answers[0].second.why;
#else
  EXPECT_FALSE(answers[0].second.serves);
  EXPECT_EQ(answers[0].second.why, "not in this build");
#endif
  EXPECT_FALSE(answers[1].second.serves);
  EXPECT_EQ(answers[1].second.why, LayerBodies<float>::Has("Convolution", "cuDNN")
                                       ? "GPU mode only"
                                       : "not in this build");
  EXPECT_TRUE(answers[2].second.serves);
}

// The engine field filters the list; a type DEFAULT keeps off oneDNN says
// why; double data has no oneDNN body.
TEST(LayerBodiesTest, EngineAndDataTypeFilterTheList) {
  Context::set_mode(Context::CPU);
  const auto eltwise_default = LayerBodies<float>::Ask(ParseLayer("name: 'e' type: 'Eltwise'"));
  ASSERT_EQ(Names(eltwise_default), (std::vector<std::string>{"oneDNN", "reference"}));
  EXPECT_FALSE(eltwise_default[0].second.serves);
  const auto relu_caffe =
      LayerBodies<float>::Ask(ParseLayer("name: 'r' type: 'ReLU' relu_param { engine: CAFFE }"));
  EXPECT_FALSE(relu_caffe[0].second.serves);
  EXPECT_EQ(relu_caffe.back().second.why, "engine CAFFE");
#ifdef CREMA_DNNL
  EXPECT_NE(eltwise_default[0].second.why.find("one-pass SUM"), std::string::npos)
      << eltwise_default[0].second.why;
  EXPECT_EQ(relu_caffe[0].second.why, "engine CAFFE");
  const auto relu_double =
      LayerBodies<double>::Ask(ParseLayer("name: 'r' type: 'ReLU' relu_param { engine: DNNL }"));
  EXPECT_FALSE(relu_double[0].second.serves);
  EXPECT_EQ(relu_double[0].second.why, "float data only");
#endif
}

// Where each type reads its engine; a type with one body reads DEFAULT.
TEST(LayerBodiesTest, EngineOfReadsEachTypesField) {
  EXPECT_EQ(EngineOf(ParseLayer("type: 'Convolution' convolution_param { engine: DNNL }")),
            Engine::kDnnl);
  EXPECT_EQ(
      EngineOf(ParseLayer("type: 'ConvolutionDepthwise' convolution_param { engine: CAFFE }")),
      Engine::kCaffe);
  EXPECT_EQ(EngineOf(ParseLayer("type: 'Pooling' pooling_param { engine: CUDNN }")),
            Engine::kCudnn);
  EXPECT_EQ(EngineOf(ParseLayer("type: 'InnerProduct' inner_product_param { engine: DNNL }")),
            Engine::kDnnl);
  EXPECT_EQ(EngineOf(ParseLayer("type: 'BatchNorm' batch_norm_param { engine: CAFFE }")),
            Engine::kCaffe);
  EXPECT_EQ(EngineOf(ParseLayer("type: 'Softmax' softmax_param { engine: DNNL }")), Engine::kDnnl);
  // The engine of another type's message is not this type's.
  EXPECT_EQ(EngineOf(ParseLayer("type: 'ReLU' softmax_param { engine: DNNL }")), Engine::kDefault);
  EXPECT_EQ(EngineOf(ParseLayer("type: 'Concat'")), Engine::kDefault);
  // SetEngine writes the field EngineOf reads, for every type with a list.
  for (const char* type : {"Convolution", "DepthwiseConvolution", "ConvolutionDepthwise",
                           "Deconvolution", "Pooling", "InnerProduct", "BatchNorm", "ReLU",
                           "Sigmoid", "TanH", "LRN", "Softmax", "Eltwise"}) {
    ASSERT_TRUE(LayerBodies<float>::HasList(type)) << type;
    for (const Engine engine : {Engine::kDnnl, Engine::kCaffe, Engine::kCudnn, Engine::kDefault}) {
      if (std::string(type) == "Eltwise" && engine == Engine::kCudnn) continue;  // not in its enum
      LayerParameter param;
      param.set_type(type);
      SetEngine(&param, engine);
      EXPECT_EQ(EngineOf(param), engine) << type << " " << EngineName(engine);
    }
  }
  EXPECT_FALSE(LayerBodies<float>::HasList("Concat"));
}

template <template <typename> class Reference>
void ExpectCudnnEngineOnCpuIsReference(const std::string& layer_text) {
  SCOPED_TRACE(layer_text);
  Context::set_mode(Context::CPU);
  LayerParameter param;
  ReadProtoFromString(layer_text, "layer", &param);
  const auto as_float = LayerRegistry<float>::CreateLayer(param);
  EXPECT_EQ(typeid(*as_float), typeid(Reference<float>));
  const auto as_double = LayerRegistry<double>::CreateLayer(param);
  EXPECT_EQ(typeid(*as_double), typeid(Reference<double>));
}

TEST(LayerBodiesTest, CudnnInCpuModeRunsTheReferenceBody) {
  ExpectCudnnEngineOnCpuIsReference<ConvolutionLayer>(
      "type: 'Convolution' convolution_param { num_output: 1 kernel_size: 1 engine: CUDNN }");
  ExpectCudnnEngineOnCpuIsReference<PoolingLayer>(
      "type: 'Pooling' pooling_param { kernel_size: 2 engine: CUDNN }");
  ExpectCudnnEngineOnCpuIsReference<ReLULayer>("type: 'ReLU' relu_param { engine: CUDNN }");
  ExpectCudnnEngineOnCpuIsReference<SigmoidLayer>(
      "type: 'Sigmoid' sigmoid_param { engine: CUDNN }");
  ExpectCudnnEngineOnCpuIsReference<TanHLayer>("type: 'TanH' tanh_param { engine: CUDNN }");
  ExpectCudnnEngineOnCpuIsReference<SoftmaxLayer>(
      "type: 'Softmax' softmax_param { engine: CUDNN }");
  ExpectCudnnEngineOnCpuIsReference<LRNLayer>("type: 'LRN' lrn_param { engine: CUDNN }");
  ExpectCudnnEngineOnCpuIsReference<BatchNormLayer>(
      "type: 'BatchNorm' batch_norm_param { engine: CUDNN }");
}

#ifdef CREMA_DNNL

// `layer_text` holds ENGINE where the engine value goes.
template <template <typename> class Dnnl>
void ExpectEngineChoice(const std::string& layer_text, bool default_is_dnnl) {
  SCOPED_TRACE(layer_text);
  Context::set_mode(Context::CPU);
  for (const std::string engine : {"DNNL", "DEFAULT", "CAFFE"}) {
    std::string text = layer_text;
    text.replace(text.find("ENGINE"), 6, engine);
    LayerParameter param;
    ReadProtoFromString(text, "layer", &param);
    const auto as_float = LayerRegistry<float>::CreateLayer(param);
    const bool dnnl = engine == "DNNL" || (engine == "DEFAULT" && default_is_dnnl);
    EXPECT_EQ(dynamic_cast<Dnnl<float>*>(as_float.get()) != nullptr, dnnl) << engine;
    EXPECT_EQ(as_float->layer_param().type(), param.type());
    const auto as_double = LayerRegistry<double>::CreateLayer(param);
    EXPECT_EQ(as_double->layer_param().type(), param.type());
  }
}

TEST(LayerBodiesTest, EachTypePicksItsBody) {
  ExpectEngineChoice<DnnlConvolutionLayer>(
      "type: 'Convolution' convolution_param { num_output: 1 kernel_size: 1 engine: ENGINE }",
      true);
  ExpectEngineChoice<DnnlDepthwiseConvolutionLayer>(
      "type: 'ConvolutionDepthwise' convolution_param { num_output: 1 kernel_size: 3 "
      "engine: ENGINE }",
      true);
  ExpectEngineChoice<DnnlDepthwiseConvolutionLayer>(
      "type: 'DepthwiseConvolution' convolution_param { num_output: 1 kernel_size: 3 "
      "engine: ENGINE }",
      true);
  ExpectEngineChoice<DnnlDeconvolutionLayer>(
      "type: 'Deconvolution' convolution_param { num_output: 1 kernel_size: 1 engine: ENGINE }",
      false);
  ExpectEngineChoice<DnnlInnerProductLayer>(
      "type: 'InnerProduct' inner_product_param { num_output: 1 engine: ENGINE }", true);
  ExpectEngineChoice<DnnlPoolingLayer>(
      "type: 'Pooling' pooling_param { kernel_size: 2 engine: ENGINE }", true);
  ExpectEngineChoice<DnnlReLULayer>("type: 'ReLU' relu_param { engine: ENGINE }", true);
  ExpectEngineChoice<DnnlLRNLayer>("type: 'LRN' lrn_param { engine: ENGINE }", true);
  ExpectEngineChoice<DnnlSoftmaxLayer>("type: 'Softmax' softmax_param { engine: ENGINE }", true);
  ExpectEngineChoice<DnnlEltwiseLayer>("type: 'Eltwise' eltwise_param { engine: ENGINE }", false);
  ExpectEngineChoice<DnnlBatchNormLayer>("type: 'BatchNorm' batch_norm_param { engine: ENGINE }",
                                         false);
}

#endif  // CREMA_DNNL: without oneDNN every engine runs the reference body

// A net's engine fields naming Caffe's runtimes (the published MobileNets
// put engine: CAFFE on every depthwise convolution; Intel's files say
// MKL2017) run the body DEFAULT runs, unless the net asks for them as
// written (engine_mode: AS_WRITTEN), where CAFFE is the reference body.
TEST(EngineModeTest, CaffeAndIntelEnginesRunWhatDefaultRunsUnlessAsWritten) {
  Context::set_mode(Context::CPU);
  const std::string input =
      "layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 1 dim: 32 dim: 14 "
      "dim: 14 } } }";
  auto conv = [&](const std::string& engine) {
    return input +
           "layer { name: 'dw' type: 'Convolution' bottom: 'x' top: 'y' convolution_param { "
           "num_output: 32 group: 32 kernel_size: 3 pad: 1 " +
           engine +
           " } } layer { name: 'pool' type: 'Pooling' bottom: 'y' top: 'z' "
           "pooling_param { pool: MAX kernel_size: 2 stride: 2 " +
           engine + " } }";
  };
  auto body_of = [](const std::string& text, const std::string& layer) -> std::string {
    NetParameter param = ParseNet(text);
    param.mutable_state()->set_phase(TEST);
    Net<float> net(param);
    const Layer<float>& made = *net.layer_by_name(layer);
    return typeid(made).name();
  };
  for (const std::string layer : {"dw", "pool"}) {
    const std::string default_body = body_of(conv(""), layer);
    for (const std::string engine : {"engine: CAFFE", "engine: CUDNN", "engine: MKL2017"}) {
      EXPECT_EQ(body_of(conv(engine), layer), default_body) << layer << ", " << engine;
    }
    const std::string as_written = "engine_mode: AS_WRITTEN " + conv("engine: CAFFE");
    const std::string reference =
        layer == "dw" ? typeid(ConvolutionLayer<float>).name() : typeid(PoolingLayer<float>).name();
    EXPECT_EQ(body_of(as_written, layer), reference) << layer;
  }
}

}  // namespace
}  // namespace crema
