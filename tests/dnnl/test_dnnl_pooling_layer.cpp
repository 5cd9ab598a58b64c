// The oneDNN pooling against the reference one: MAX and AVE with Caffe's
// ceil-rounded sizes, padding and global pooling; the cases oneDNN cannot
// express (STOCHASTIC, a mask top, AVE past the padding) fall back; and
// numerical gradient checks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crema/dnnl/dnnl_pooling_layer.hpp"
#include "crema/layers/pooling_layer.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

std::string PoolingLayerText(const std::string& pooling_param) {
  return "name: 'pool' type: 'Pooling' pooling_param { " + pooling_param + " }";
}

void ExpectPoolingMatchesReference(const std::string& pooling_param, std::vector<int> bottom_shape,
                                   bool expect_dnnl = true) {
  DnnlCheck check{PoolingLayerText(pooling_param), {bottom_shape}};
  check.expect_dnnl = expect_dnnl;
  ExpectDnnlMatchesReference<PoolingLayer, DnnlPoolingLayer>(check);
}

TEST(DnnlPoolingLayerTest, MaxMatchesReference) {
  // (9 - 3) / 2 + 1 = 4 rows; (8 - 3) / 2 rounds up: the last column window
  // runs past the input.
  ExpectPoolingMatchesReference("pool: MAX kernel_size: 3 stride: 2", {2, 3, 9, 8});
}

TEST(DnnlPoolingLayerTest, MaxPaddedMatchesReference) {
  ExpectPoolingMatchesReference("pool: MAX kernel_size: 3 stride: 2 pad: 1", {2, 2, 7, 6});
}

TEST(DnnlPoolingLayerTest, AveWindowPastTheInputDividesByItsInputs) {
  ExpectPoolingMatchesReference("pool: AVE kernel_size: 3 stride: 2", {2, 3, 8, 8});
}

TEST(DnnlPoolingLayerTest, AvePaddedDividesByTheKernel) {
  ExpectPoolingMatchesReference("pool: AVE kernel_size: 3 stride: 2 pad: 1", {2, 2, 7, 7});
}

TEST(DnnlPoolingLayerTest, AveGlobalMatchesReference) {
  ExpectPoolingMatchesReference("pool: AVE global_pooling: true", {2, 4, 5, 3});
}

TEST(DnnlPoolingLayerTest, AvePastThePaddingFallsBack) {
  // 8 + 2 - 3 = 7 rounds up to 4 strides: the last window starts at 7 and
  // passes the padded input's end, where Caffe's divisor is neither oneDNN's.
  ExpectPoolingMatchesReference("pool: AVE kernel_size: 3 stride: 2 pad: 1", {1, 2, 8, 8}, false);
}

// STOCHASTIC and a second (argmax) top: the reference body.
TEST(DnnlPoolingLayerTest, StochasticAndMaskTopFallBack) {
  for (const std::string pooling_param :
       {"pool: STOCHASTIC kernel_size: 2 stride: 2", "pool: MAX kernel_size: 2 stride: 2"}) {
    LayerParameter param;
    ReadProtoFromString(PoolingLayerText(pooling_param), "layer", &param);
    Blob<float> bottom(std::vector<int>{1, 2, 4, 4}), top, mask;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    if (pooling_param.find("MAX") != std::string::npos) top_vec.push_back(&mask);
    DnnlPoolingLayer<float> layer(WithEngine(param, Engine::kDnnl));
    layer.SetUp(bottom_vec, top_vec);
    EXPECT_FALSE(layer.uses_dnnl()) << pooling_param;
  }
}

// Engine DEFAULT keeps the reference body's own 2x2 stride-2 max kernel.
TEST(DnnlPoolingLayerTest, DefaultEngineKeepsTheReferenceTwoByTwoMax) {
  for (const std::string pooling_param :
       {"pool: MAX kernel_size: 2 stride: 2", "pool: MAX kernel_size: 3 stride: 2"}) {
    LayerParameter param;
    ReadProtoFromString(PoolingLayerText(pooling_param), "layer", &param);
    Blob<float> bottom(std::vector<int>{1, 2, 8, 8}), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlPoolingLayer<float> by_default(param), always(WithEngine(param, Engine::kDnnl));
    by_default.SetUp(bottom_vec, top_vec);
    always.SetUp(bottom_vec, top_vec);
    EXPECT_EQ(by_default.uses_dnnl(), pooling_param.find("size: 3") != std::string::npos);
    EXPECT_TRUE(always.uses_dnnl());
  }
}

void ExpectPoolingGradient(const std::string& pooling_param) {
  SCOPED_TRACE(pooling_param);
  LayerParameter param;
  ReadProtoFromString(PoolingLayerText(pooling_param), "layer", &param);
  Blob<float> bottom(std::vector<int>{2, 2, 7, 6}), top;
  SpreadFill(&bottom, 3);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlPoolingLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-2);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

TEST(DnnlPoolingLayerTest, NumericalGradientMax) {
  ExpectPoolingGradient("pool: MAX kernel_size: 3 stride: 2 pad: 1");
}

TEST(DnnlPoolingLayerTest, NumericalGradientAve) {
  ExpectPoolingGradient("pool: AVE kernel_size: 3 stride: 2");
}

}  // namespace
}  // namespace crema
