// The oneDNN eltwise against the reference one: SUM with coefficients over
// three bottoms; PROD and MAX run the reference body; a numerical gradient
// check of SUM.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crema/dnnl/dnnl_eltwise_layer.hpp"
#include "crema/layers/eltwise_layer.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

TEST(DnnlEltwiseLayerTest, SumWithCoefficientsMatchesReference) {
  ExpectDnnlMatchesReference<EltwiseLayer, DnnlEltwiseLayer>(
      {"name: 'sum' type: 'Eltwise' eltwise_param { operation: SUM coeff: 1 coeff: -0.5 "
       "coeff: 2 }",
       {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}}});
}

TEST(DnnlEltwiseLayerTest, ProdAndMaxRunTheReferenceBody) {
  for (const char* operation : {"PROD", "MAX"}) {
    DnnlCheck check{
        std::string("name: 'e' type: 'Eltwise' eltwise_param { operation: ") + operation + " }",
        {{2, 3, 4}, {2, 3, 4}}};
    check.expect_dnnl = false;
    ExpectDnnlMatchesReference<EltwiseLayer, DnnlEltwiseLayer>(check);
  }
}

TEST(DnnlEltwiseLayerTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString(
      "name: 'sum' type: 'Eltwise' eltwise_param { operation: SUM coeff: 2 coeff: -0.5 }", "layer",
      &param);
  Blob<float> first(std::vector<int>{2, 3, 4}), second(std::vector<int>{2, 3, 4}), top;
  GaussianFill(&first, 1.0f);
  GaussianFill(&second, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&first, &second}, top_vec{&top};
  DnnlEltwiseLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

}  // namespace
}  // namespace crema
