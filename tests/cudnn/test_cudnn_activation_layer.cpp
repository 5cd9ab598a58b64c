// The cuDNN ReLU, Sigmoid and TanH against their CUDA bodies, in place and
// not; a leaky ReLU runs the CUDA body; numerical gradients. GPU only.
#include <gtest/gtest.h>

#include <vector>

#include "crema/cudnn/cudnn_activation_layer.hpp"
#include "cudnn/cudnn_reference_check.hpp"
#include "gradient_checker.hpp"

namespace crema {
namespace {

template <typename Dtype>
using CudnnReLUTest = CudnnLayerTest<Dtype>;
TYPED_TEST_SUITE(CudnnReLUTest, CudnnDtypes);

template <typename Dtype>
void ExpectReLU(const CudnnCheck& check) {
  ExpectCudnnMatchesReference<ReLULayer, CudnnReLULayer, Dtype>(check);
}

const char* const kReLULayer = "name: 'layer' type: 'ReLU'";

TYPED_TEST(CudnnReLUTest, MatchesCudaBody) {
  ExpectReLU<TypeParam>(CudnnCheck(kReLULayer, {{2, 3, 4, 5}}));
  ExpectReLU<TypeParam>(CudnnCheck(kReLULayer, {{1000}}));
}

TYPED_TEST(CudnnReLUTest, InPlaceMatchesCudaBody) {
  CudnnCheck check(kReLULayer, {{3, 7, 2}});
  check.in_place = true;
  ExpectReLU<TypeParam>(check);
}

TYPED_TEST(CudnnReLUTest, LeakyRunsTheCudaBody) {
  CudnnCheck check("name: 'relu' type: 'ReLU' relu_param { negative_slope: 0.1 }", {{2, 3, 4, 5}});
  check.expect_cudnn = false;
  ExpectReLU<TypeParam>(check);
}

TYPED_TEST(CudnnReLUTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString(kReLULayer, "layer", &param);
  Blob<TypeParam> bottom(std::vector<int>{2, 3, 4}), top;
  GaussianFill(&bottom, TypeParam(1));
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnReLULayer<TypeParam> layer(param);
  GradientChecker<TypeParam> checker(TypeParam(1e-2), TypeParam(1e-3), 1701, TypeParam(0),
                                     TypeParam(0.01));
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_cudnn());
}

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
