// Which body a layer gets in a build with cuDNN: every type with a cuDNN
// layer registers it (float and double); in GPU mode engines DEFAULT and
// CUDNN make the cuDNN layer and CAFFE and DNNL the reference one, whose
// GPU body is the CUDA body.
#include <gtest/gtest.h>

#include <string>

#include "crema/cudnn/cudnn_activation_layer.hpp"
#include "crema/cudnn/cudnn_batch_norm_layer.hpp"
#include "crema/cudnn/cudnn_conv_layer.hpp"
#include "crema/cudnn/cudnn_lrn_layer.hpp"
#include "crema/cudnn/cudnn_pooling_layer.hpp"
#include "crema/cudnn/cudnn_softmax_layer.hpp"
#include "crema/layer_bodies.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

const char* const kCudnnTypes[] = {"Convolution", "Pooling", "ReLU", "Sigmoid",
                                   "TanH",        "Softmax", "LRN",  "BatchNorm"};

TEST(CudnnRegistryTest, EveryTypeRegistersItsCudnnLayer) {
  for (const char* type : kCudnnTypes) {
    EXPECT_TRUE((LayerBodies<float>::Has(type, "cuDNN"))) << type;
    EXPECT_TRUE((LayerBodies<double>::Has(type, "cuDNN"))) << type;
  }
  EXPECT_FALSE((LayerBodies<float>::Has("InnerProduct", "cuDNN")));
}

class CudnnEngineTest : public GpuTest {};

// `layer_text` holds ENGINE where the engine value goes.
template <template <typename> class Cudnn>
void ExpectGpuEngineChoice(const std::string& layer_text) {
  SCOPED_TRACE(layer_text);
  for (const std::string engine : {"DEFAULT", "CUDNN", "CAFFE", "DNNL"}) {
    std::string text = layer_text;
    text.replace(text.find("ENGINE"), 6, engine);
    LayerParameter param;
    ReadProtoFromString(text, "layer", &param);
    const bool cudnn = engine == "DEFAULT" || engine == "CUDNN";
    const auto as_float = LayerRegistry<float>::CreateLayer(param);
    EXPECT_EQ(dynamic_cast<Cudnn<float>*>(as_float.get()) != nullptr, cudnn) << engine;
    const auto as_double = LayerRegistry<double>::CreateLayer(param);
    EXPECT_EQ(dynamic_cast<Cudnn<double>*>(as_double.get()) != nullptr, cudnn) << engine;
  }
}

TEST_F(CudnnEngineTest, GpuModePicksCudnnForDefaultAndCudnn) {
  ExpectGpuEngineChoice<CudnnConvolutionLayer>(
      "type: 'Convolution' convolution_param { num_output: 1 kernel_size: 1 engine: ENGINE }");
  ExpectGpuEngineChoice<CudnnPoolingLayer>(
      "type: 'Pooling' pooling_param { kernel_size: 2 engine: ENGINE }");
  ExpectGpuEngineChoice<CudnnReLULayer>("type: 'ReLU' relu_param { engine: ENGINE }");
  ExpectGpuEngineChoice<CudnnSigmoidLayer>("type: 'Sigmoid' sigmoid_param { engine: ENGINE }");
  ExpectGpuEngineChoice<CudnnTanHLayer>("type: 'TanH' tanh_param { engine: ENGINE }");
  ExpectGpuEngineChoice<CudnnSoftmaxLayer>("type: 'Softmax' softmax_param { engine: ENGINE }");
  ExpectGpuEngineChoice<CudnnLRNLayer>("type: 'LRN' lrn_param { engine: ENGINE }");
  ExpectGpuEngineChoice<CudnnBatchNormLayer>(
      "type: 'BatchNorm' batch_norm_param { engine: ENGINE }");
}

}  // namespace
}  // namespace crema
