// The oneDNN deconvolution against the reference one: stride and padding,
// groups with dilation and no bias, a rectangular kernel; 3-D falls back; a
// numerical gradient check.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crema/dnnl/dnnl_deconv_layer.hpp"
#include "crema/layers/deconv_layer.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

std::string DeconvLayerText(const std::string& convolution_param) {
  return "name: 'deconv' type: 'Deconvolution' convolution_param { " + convolution_param +
         " weight_filler { type: 'gaussian' std: 0.3 }"
         " bias_filler { type: 'gaussian' std: 0.3 } }";
}

void ExpectDeconvMatchesReference(const std::string& convolution_param,
                                  std::vector<int> bottom_shape, bool expect_dnnl = true) {
  DnnlCheck check{DeconvLayerText(convolution_param), {bottom_shape}};
  check.expect_dnnl = expect_dnnl;
  ExpectDnnlMatchesReference<DeconvolutionLayer, DnnlDeconvolutionLayer>(check);
}

TEST(DnnlDeconvolutionLayerTest, MatchesReferenceStridePad) {
  ExpectDeconvMatchesReference("num_output: 4 kernel_size: 3 stride: 2 pad: 1", {2, 3, 5, 4});
}

TEST(DnnlDeconvolutionLayerTest, MatchesReferenceGroupsDilationNoBias) {
  ExpectDeconvMatchesReference("num_output: 6 kernel_size: 3 group: 2 dilation: 2 bias_term: false",
                               {2, 4, 4, 5});
}

TEST(DnnlDeconvolutionLayerTest, MatchesReferenceRectangular) {
  ExpectDeconvMatchesReference(
      "num_output: 3 kernel_h: 4 kernel_w: 2 stride_h: 2 stride_w: 3 pad_h: 1", {1, 2, 3, 4});
}

TEST(DnnlDeconvolutionLayerTest, ThreeDimensionalFallsBack) {
  ExpectDeconvMatchesReference("num_output: 2 kernel_size: 2", {1, 2, 3, 3, 2}, false);
}

TEST(DnnlDeconvolutionLayerTest, NumericalGradient) {
  Context::set_random_seed(1701);
  LayerParameter param;
  ReadProtoFromString(DeconvLayerText("num_output: 3 kernel_size: 3 stride: 2 pad: 1"), "layer",
                      &param);
  Blob<float> bottom(std::vector<int>{2, 2, 3, 3}), top;
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlDeconvolutionLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-2);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

}  // namespace
}  // namespace crema
