// The oneDNN inner product against the reference one: plain, transposed
// weights, no bias, a later axis; a numerical gradient check; in bf16 within
// bf16's precision, and what engine DEFAULT runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_inner_product_layer.hpp"
#include "crema/layers/inner_product_layer.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

void ExpectInnerProductMatchesReference(const std::string& inner_product_param,
                                        std::vector<int> bottom_shape) {
  ExpectDnnlMatchesReference<InnerProductLayer, DnnlInnerProductLayer>(
      {"name: 'ip' type: 'InnerProduct' inner_product_param { " + inner_product_param +
           " weight_filler { type: 'gaussian' std: 0.3 }"
           " bias_filler { type: 'gaussian' std: 0.3 } }",
       {bottom_shape}});
}

TEST(DnnlInnerProductLayerTest, MatchesReference) {
  ExpectInnerProductMatchesReference("num_output: 6", {2, 3, 4, 5});
}

TEST(DnnlInnerProductLayerTest, MatchesReferenceTransposed) {
  ExpectInnerProductMatchesReference("num_output: 7 transpose: true", {3, 10});
}

TEST(DnnlInnerProductLayerTest, MatchesReferenceNoBiasLaterAxis) {
  ExpectInnerProductMatchesReference("num_output: 4 bias_term: false axis: 2", {2, 3, 5, 2});
}

TEST(DnnlInnerProductLayerTest, NumericalGradient) {
  Context::set_random_seed(1701);
  LayerParameter param;
  ReadProtoFromString(
      "name: 'ip' type: 'InnerProduct' inner_product_param { num_output: 4 "
      "weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' std: 0.3 } }",
      "layer", &param);
  Blob<float> bottom(std::vector<int>{2, 3, 2, 2}), top;
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlInnerProductLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-2);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

// Engine DEFAULT runs the reference body in float; asked for bf16 it runs
// oneDNN (on CPUs that have bf16 kernels) over big enough batches only; the
// engine DNNL runs bf16 whatever the batch.
TEST(DnnlInnerProductLayerTest, DefaultEngineRunsOneDnnInBf16OverBigBatchesOnly) {
  LayerParameter param;
  ReadProtoFromString("name: 'ip' type: 'InnerProduct' inner_product_param { num_output: 8 }",
                      "layer", &param);
  const int big = kInnerProductBf16MinRows;
  for (int rows : {4, big}) {
    SCOPED_TRACE(testing::Message() << rows << " rows");
    Blob<float> bottom(std::vector<int>{rows, 16}), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    param.clear_compute_precision();
    DnnlInnerProductLayer<float> float_layer(param);
    float_layer.SetUp(bottom_vec, top_vec);
    EXPECT_FALSE(float_layer.uses_dnnl());
    param.set_compute_precision(BF16);
    DnnlInnerProductLayer<float> default_layer(param);
    default_layer.SetUp(bottom_vec, top_vec);
    EXPECT_EQ(default_layer.uses_bf16(), DnnlHasBf16() && rows >= big);
    EXPECT_EQ(default_layer.uses_dnnl(), default_layer.uses_bf16());
    DnnlInnerProductLayer<float> dnnl_layer(WithEngine(param, Engine::kDnnl));
    dnnl_layer.SetUp(bottom_vec, top_vec);
    EXPECT_EQ(dnnl_layer.uses_bf16(), DnnlHasBf16());
  }
}

// bf16 operands, float results: forward, bottom and parameter gradients
// within bf16's precision of the float reference, for the shapes above.
TEST(DnnlInnerProductLayerTest, Bf16MatchesReferenceWithinBf16Precision) {
  if (!DnnlHasBf16()) GTEST_SKIP() << "this CPU has no avx512_bf16: BF16 layers compute in float";
  const std::pair<std::string, std::vector<int>> cases[] = {
      {"num_output: 6", {2, 3, 4, 5}},
      {"num_output: 7 transpose: true", {3, 10}},
      {"num_output: 4 bias_term: false axis: 2", {2, 3, 5, 2}},
      {"num_output: 40", {16, 64}}};
  for (const auto& c : cases) {
    DnnlCheck check(
        "name: 'ip' type: 'InnerProduct' compute_precision: BF16 inner_product_param { " + c.first +
            " weight_filler { type: 'gaussian' std: 0.3 }"
            " bias_filler { type: 'gaussian' std: 0.3 } }",
        {c.second});
    check.tolerance = 3e-2f;
    ExpectDnnlMatchesReference<InnerProductLayer, DnnlInnerProductLayer>(check);
  }
}

// The switch: the same layer in BF16 computes another top than in FLOAT, by
// bf16's rounding only.
TEST(DnnlInnerProductLayerTest, Bf16SwitchChangesTheKernelsOnly) {
  if (!DnnlHasBf16()) GTEST_SKIP() << "this CPU has no avx512_bf16: BF16 layers compute in float";
  ExpectBf16SwitchChangesTheKernelsOnly<DnnlInnerProductLayer>(
      "name: 'ip' type: 'InnerProduct' inner_product_param { num_output: 32 "
      "weight_filler { type: 'gaussian' std: 0.1 } }",
      {8, 64});
}

}  // namespace
}  // namespace crema
