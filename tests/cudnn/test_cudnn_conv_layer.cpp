// The cuDNN convolution against the CUDA body: strides, padding, dilation,
// groups, pointwise and rectangular kernels, no bias, two bottoms, a batch
// of one; parameter gradients that accumulate; the N-D shape that falls back
// to the CUDA body; and numerical gradients. GPU only.
#include <gtest/gtest.h>

#include <vector>

#include "crema/cudnn/cudnn_conv_layer.hpp"
#include "cudnn/cudnn_reference_check.hpp"
#include "gradient_checker.hpp"

namespace crema {
namespace {

template <typename Dtype>
using CudnnConvolutionTest = CudnnLayerTest<Dtype>;
TYPED_TEST_SUITE(CudnnConvolutionTest, CudnnDtypes);

template <typename Dtype>
void ExpectConvolution(const CudnnCheck& check) {
  ExpectCudnnMatchesReference<ConvolutionLayer, CudnnConvolutionLayer, Dtype>(check);
}

const char* const kConvFillers =
    "weight_filler { type: 'gaussian' std: 0.1 } "
    "bias_filler { type: 'gaussian' std: 0.1 }";

std::string ConvText(const std::string& fields) {
  return "name: 'conv' type: 'Convolution' convolution_param { " + fields + " " + kConvFillers +
         " }";
}

// cuDNN may sum in another order (or by FFT or Winograd transforms): sums of
// up to a few hundred products agree to 1e-3 of their size.
CudnnCheck ConvolutionCheck(const std::string& fields, std::vector<std::vector<int>> shapes) {
  CudnnCheck check(ConvText(fields), std::move(shapes));
  check.tolerance = 1e-3;
  return check;
}

TYPED_TEST(CudnnConvolutionTest, MatchesCudaBody) {
  ExpectConvolution<TypeParam>(ConvolutionCheck("num_output: 8 kernel_size: 3", {{2, 3, 9, 10}}));
  ExpectConvolution<TypeParam>(
      ConvolutionCheck("num_output: 4 kernel_size: 3 stride: 2 pad: 1", {{2, 5, 11, 9}}));
  ExpectConvolution<TypeParam>(
      ConvolutionCheck("num_output: 6 kernel_size: 3 dilation: 2 pad: 2", {{1, 4, 12, 12}}));
  ExpectConvolution<TypeParam>(
      ConvolutionCheck("num_output: 6 kernel_size: 3 group: 3 pad: 1", {{2, 6, 7, 8}}));
  ExpectConvolution<TypeParam>(ConvolutionCheck("num_output: 7 kernel_size: 1", {{3, 16, 5, 5}}));
  ExpectConvolution<TypeParam>(ConvolutionCheck(
      "num_output: 3 kernel_h: 2 kernel_w: 5 stride_h: 1 stride_w: 2", {{2, 2, 6, 13}}));
  ExpectConvolution<TypeParam>(
      ConvolutionCheck("num_output: 5 kernel_size: 3 bias_term: false", {{2, 4, 6, 6}}));
  // Depthwise: one input channel per group.
  ExpectConvolution<TypeParam>(
      ConvolutionCheck("num_output: 8 kernel_size: 3 group: 8 pad: 1", {{2, 8, 9, 9}}));
}

TYPED_TEST(CudnnConvolutionTest, TwoBottomsShareTheFilters) {
  CudnnCheck check = ConvolutionCheck("num_output: 4 kernel_size: 3", {{2, 3, 7, 7}, {2, 3, 7, 7}});
  check.tops = 2;
  ExpectConvolution<TypeParam>(check);
}

TYPED_TEST(CudnnConvolutionTest, NdShapesRunTheCudaBody) {
  CudnnCheck check = ConvolutionCheck("num_output: 3 kernel_size: 2", {{2, 2, 4, 5, 6}});
  check.expect_cudnn = false;
  ExpectConvolution<TypeParam>(check);
}

TYPED_TEST(CudnnConvolutionTest, AReshapeKeepsItOnCudnn) {
  LayerParameter param;
  ReadProtoFromString(ConvText("num_output: 4 kernel_size: 3"), "layer", &param);
  Blob<TypeParam> bottom(std::vector<int>{2, 3, 8, 8}), top;
  GaussianFill(&bottom, TypeParam(1));
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnConvolutionLayer<TypeParam> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  bottom.Reshape(std::vector<int>{5, 3, 11, 9});
  GaussianFill(&bottom, TypeParam(1));
  layer.Reshape(bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_cudnn());
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{5, 4, 9, 7}));
}

TYPED_TEST(CudnnConvolutionTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString(ConvText("num_output: 3 kernel_size: 3 stride: 2 pad: 1 group: 1"), "layer",
                      &param);
  Blob<TypeParam> bottom(std::vector<int>{2, 2, 5, 6}), top;
  GaussianFill(&bottom, TypeParam(1));
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnConvolutionLayer<TypeParam> layer(param);
  GradientChecker<TypeParam> checker(TypeParam(1e-2), TypeParam(1e-3));
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_cudnn());
}

}  // namespace
}  // namespace crema
