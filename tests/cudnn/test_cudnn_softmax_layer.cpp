// The cuDNN softmax against the CUDA body over channels (axis 1) and over a
// later axis, with large inputs (the maximum is subtracted first); numerical
// gradients. GPU only.
#include <gtest/gtest.h>

#include <vector>

#include "crema/cudnn/cudnn_softmax_layer.hpp"
#include "cudnn/cudnn_reference_check.hpp"
#include "gradient_checker.hpp"

namespace crema {
namespace {

template <typename Dtype>
using CudnnSoftmaxTest = CudnnLayerTest<Dtype>;
TYPED_TEST_SUITE(CudnnSoftmaxTest, CudnnDtypes);

template <typename Dtype>
void ExpectSoftmax(const CudnnCheck& check) {
  ExpectCudnnMatchesReference<SoftmaxLayer, CudnnSoftmaxLayer, Dtype>(check);
}

TYPED_TEST(CudnnSoftmaxTest, MatchesCudaBody) {
  ExpectSoftmax<TypeParam>(CudnnCheck("name: 'prob' type: 'Softmax'", {{4, 10}}));
  ExpectSoftmax<TypeParam>(CudnnCheck("name: 'prob' type: 'Softmax'", {{2, 5, 3, 4}}));
  ExpectSoftmax<TypeParam>(
      CudnnCheck("name: 'prob' type: 'Softmax' softmax_param { axis: 2 }", {{2, 3, 6, 4}}));
}

TYPED_TEST(CudnnSoftmaxTest, InPlaceMatchesCudaBody) {
  CudnnCheck check("name: 'prob' type: 'Softmax'", {{3, 6, 2, 2}});
  check.in_place = true;
  ExpectSoftmax<TypeParam>(check);
}

TYPED_TEST(CudnnSoftmaxTest, LargeInputsStayFinite) {
  CudnnCheck check("name: 'prob' type: 'Softmax'", {{3, 7}});
  check.fill_float = [](Blob<float>* blob) {
    for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = 100.0f * (i % 5);
  };
  check.fill_double = [](Blob<double>* blob) {
    for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = 1000.0 * (i % 5);
  };
  ExpectSoftmax<TypeParam>(check);
}

TYPED_TEST(CudnnSoftmaxTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString("name: 'prob' type: 'Softmax'", "layer", &param);
  Blob<TypeParam> bottom(std::vector<int>{2, 4, 2, 3}), top;
  GaussianFill(&bottom, TypeParam(1));
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnSoftmaxLayer<TypeParam> layer(param);
  GradientChecker<TypeParam> checker(TypeParam(1e-2), TypeParam(1e-3));
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_cudnn());
}

}  // namespace
}  // namespace crema
