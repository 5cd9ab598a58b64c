// The oneDNN inner product against the reference one: plain, transposed
// weights, no bias, a later axis; and a numerical gradient check.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crema/layers/dnnl_inner_product_layer.hpp"
#include "crema/layers/inner_product_layer.hpp"
#include "dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

#ifdef CREMA_DNNL

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
  DnnlInnerProductLayer<float> layer(param);
  GradientChecker<float> checker(1e-2, 1e-2);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

#endif  // CREMA_DNNL: without oneDNN there is nothing to compare

}  // namespace
}  // namespace crema
