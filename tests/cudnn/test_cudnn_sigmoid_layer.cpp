// The cuDNN Sigmoid against the CUDA body, in place and not; numerical
// gradients. GPU only.
#include <gtest/gtest.h>

#include <vector>

#include "crema/cudnn/cudnn_sigmoid_layer.hpp"
#include "cudnn/cudnn_reference_check.hpp"
#include "gradient_checker.hpp"

namespace crema {
namespace {

template <typename Dtype>
using CudnnSigmoidTest = CudnnLayerTest<Dtype>;
TYPED_TEST_SUITE(CudnnSigmoidTest, CudnnDtypes);

template <typename Dtype>
void ExpectSigmoid(const CudnnCheck& check) {
  ExpectCudnnMatchesReference<SigmoidLayer, CudnnSigmoidLayer, Dtype>(check);
}

const char* const kSigmoidLayer = "name: 'layer' type: 'Sigmoid'";

TYPED_TEST(CudnnSigmoidTest, MatchesCudaBody) {
  ExpectSigmoid<TypeParam>(CudnnCheck(kSigmoidLayer, {{2, 3, 4, 5}}));
  ExpectSigmoid<TypeParam>(CudnnCheck(kSigmoidLayer, {{1000}}));
}

TYPED_TEST(CudnnSigmoidTest, InPlaceMatchesCudaBody) {
  CudnnCheck check(kSigmoidLayer, {{3, 7, 2}});
  check.in_place = true;
  ExpectSigmoid<TypeParam>(check);
}

TYPED_TEST(CudnnSigmoidTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString(kSigmoidLayer, "layer", &param);
  Blob<TypeParam> bottom(std::vector<int>{2, 3, 4}), top;
  GaussianFill(&bottom, TypeParam(1));
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnSigmoidLayer<TypeParam> layer(param);
  GradientChecker<TypeParam> checker(TypeParam(1e-2), TypeParam(1e-3));
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_cudnn());
}

}  // namespace
}  // namespace crema
