// The oneDNN ReLU against the reference one: plain, leaky, in place; and a
// numerical gradient check away from the kink.
#include <gtest/gtest.h>

#include <vector>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl_relu_layer.hpp"
#include "crema/layers/relu_layer.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

TEST(DnnlReLULayerTest, MatchesReference) {
  ExpectDnnlMatchesReference<ReLULayer, DnnlReLULayer>(
      {"name: 'relu' type: 'ReLU'", {{2, 3, 4, 5}}});
}

TEST(DnnlReLULayerTest, LeakyInPlaceMatchesReference) {
  DnnlCheck check{"name: 'relu' type: 'ReLU' relu_param { negative_slope: 0.1 }", {{3, 7}}};
  check.in_place = true;
  ExpectDnnlMatchesReference<ReLULayer, DnnlReLULayer>(check);
}

// Engine DEFAULT runs oneDNN from kReLUMinDnnlCount values on.
TEST(DnnlReLULayerTest, DefaultEngineKeepsSmallBlobsOnTheReference) {
  LayerParameter param;
  ReadProtoFromString("name: 'relu' type: 'ReLU'", "layer", &param);
  for (const int count : {kReLUMinDnnlCount - 1, kReLUMinDnnlCount}) {
    Blob<float> bottom(std::vector<int>{count}), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlReLULayer<float> by_default(param), always(WithEngine(param, Engine::kDnnl));
    by_default.SetUp(bottom_vec, top_vec);
    always.SetUp(bottom_vec, top_vec);
    EXPECT_EQ(by_default.uses_dnnl(), count == kReLUMinDnnlCount);
    EXPECT_TRUE(always.uses_dnnl());
  }
}

TEST(DnnlReLULayerTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString("name: 'relu' type: 'ReLU' relu_param { negative_slope: 0.2 }", "layer",
                      &param);
  Blob<float> bottom(std::vector<int>{2, 3, 4}), top;
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlReLULayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-3, 1701, 0.f, 0.01f);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

}  // namespace
}  // namespace crema
