// The cuDNN LRN against the CUDA body across channels (AlexNet's settings and
// others); WITHIN_CHANNEL and a window wider than cuDNN's run the CUDA body;
// numerical gradients. GPU only.
#include <gtest/gtest.h>

#include <vector>

#include "crema/cudnn/cudnn_lrn_layer.hpp"
#include "cudnn/cudnn_reference_check.hpp"
#include "gradient_checker.hpp"

namespace crema {
namespace {

template <typename Dtype>
using CudnnLRNTest = CudnnLayerTest<Dtype>;
TYPED_TEST_SUITE(CudnnLRNTest, CudnnDtypes);

template <typename Dtype>
void ExpectLRN(const CudnnCheck& check) {
  ExpectCudnnMatchesReference<LRNLayer, CudnnLRNLayer, Dtype>(check);
}

std::string LRNText(const std::string& fields) {
  return "name: 'norm' type: 'LRN' lrn_param { " + fields + " }";
}

TYPED_TEST(CudnnLRNTest, AcrossChannelsMatchesCudaBody) {
  ExpectLRN<TypeParam>(
      CudnnCheck(LRNText("local_size: 5 alpha: 0.0001 beta: 0.75"), {{2, 7, 5, 6}}));
  ExpectLRN<TypeParam>(
      CudnnCheck(LRNText("local_size: 3 alpha: 0.5 beta: 0.6 k: 2"), {{2, 4, 3, 3}}));
  ExpectLRN<TypeParam>(CudnnCheck(LRNText("local_size: 1 alpha: 1 beta: 1"), {{1, 3, 2, 2}}));
}

TYPED_TEST(CudnnLRNTest, OtherSettingsRunTheCudaBody) {
  for (const char* fields : {"local_size: 3 norm_region: WITHIN_CHANNEL", "local_size: 17",
                             "local_size: 3 beta: 0.001"}) {
    CudnnCheck check(LRNText(fields), {{2, 20, 4, 4}});
    check.expect_cudnn = false;
    ExpectLRN<TypeParam>(check);
  }
}

TYPED_TEST(CudnnLRNTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString(LRNText("local_size: 3 alpha: 0.5 beta: 0.75"), "layer", &param);
  Blob<TypeParam> bottom(std::vector<int>{2, 5, 3, 3}), top;
  GaussianFill(&bottom, TypeParam(1));
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnLRNLayer<TypeParam> layer(param);
  GradientChecker<TypeParam> checker(TypeParam(1e-2), TypeParam(1e-2));
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_cudnn());
}

}  // namespace
}  // namespace crema
