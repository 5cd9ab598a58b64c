// The cuDNN TanH against the CUDA body, in place and not; numerical
// gradients. GPU only.
#include <gtest/gtest.h>

#include <vector>

#include "crema/cudnn/cudnn_tanh_layer.hpp"
#include "cudnn/cudnn_reference_check.hpp"
#include "gradient_checker.hpp"

namespace crema {
namespace {

template <typename Dtype>
using CudnnTanHTest = CudnnLayerTest<Dtype>;
TYPED_TEST_SUITE(CudnnTanHTest, CudnnDtypes);

template <typename Dtype>
void ExpectTanH(const CudnnCheck& check) {
  ExpectCudnnMatchesReference<TanHLayer, CudnnTanHLayer, Dtype>(check);
}

const char* const kTanHLayer = "name: 'layer' type: 'TanH'";

TYPED_TEST(CudnnTanHTest, MatchesCudaBody) {
  ExpectTanH<TypeParam>(CudnnCheck(kTanHLayer, {{2, 3, 4, 5}}));
  ExpectTanH<TypeParam>(CudnnCheck(kTanHLayer, {{1000}}));
}

TYPED_TEST(CudnnTanHTest, InPlaceMatchesCudaBody) {
  CudnnCheck check(kTanHLayer, {{3, 7, 2}});
  check.in_place = true;
  ExpectTanH<TypeParam>(check);
}

TYPED_TEST(CudnnTanHTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString(kTanHLayer, "layer", &param);
  Blob<TypeParam> bottom(std::vector<int>{2, 3, 4}), top;
  GaussianFill(&bottom, TypeParam(1));
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnTanHLayer<TypeParam> layer(param);
  GradientChecker<TypeParam> checker(TypeParam(1e-2), TypeParam(1e-3));
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_cudnn());
}

}  // namespace
}  // namespace crema
