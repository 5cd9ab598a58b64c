// The cuDNN pooling against the CUDA body: MAX and AVE, padded, strided,
// global; a later layer changing the top in place before Backward; the
// shapes and settings that run the CUDA body (the last window past the
// padding, the argmax top, STOCHASTIC); numerical gradients. GPU only.
#include <gtest/gtest.h>

#include <vector>

#include "crema/cudnn/cudnn_pooling_layer.hpp"
#include "cudnn/cudnn_reference_check.hpp"
#include "gradient_checker.hpp"

namespace crema {
namespace {

template <typename Dtype>
using CudnnPoolingTest = CudnnLayerTest<Dtype>;
TYPED_TEST_SUITE(CudnnPoolingTest, CudnnDtypes);

template <typename Dtype>
void ExpectPooling(const CudnnCheck& check) {
  ExpectCudnnMatchesReference<PoolingLayer, CudnnPoolingLayer, Dtype>(check);
}

std::string PoolText(const std::string& fields) {
  return "name: 'pool' type: 'Pooling' pooling_param { " + fields + " }";
}

// Max pooling on distinct values: no window holds a tie.
CudnnCheck MaxPoolCheck(const std::string& fields, std::vector<std::vector<int>> shapes) {
  CudnnCheck check(PoolText("pool: MAX " + fields), std::move(shapes));
  check.fill_float = [](Blob<float>* blob) { DistinctFill(blob, 3); };
  check.fill_double = [](Blob<double>* blob) { DistinctFill(blob, 3); };
  return check;
}

TYPED_TEST(CudnnPoolingTest, MaxMatchesCudaBody) {
  ExpectPooling<TypeParam>(MaxPoolCheck("kernel_size: 2 stride: 2", {{2, 3, 8, 6}}));
  ExpectPooling<TypeParam>(MaxPoolCheck("kernel_size: 3 stride: 2", {{2, 2, 9, 9}}));
  ExpectPooling<TypeParam>(MaxPoolCheck("kernel_size: 3 stride: 1 pad: 1", {{1, 4, 6, 7}}));
  ExpectPooling<TypeParam>(
      MaxPoolCheck("kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1", {{2, 2, 7, 6}}));
  ExpectPooling<TypeParam>(MaxPoolCheck("global_pooling: true", {{2, 5, 4, 3}}));
}

TYPED_TEST(CudnnPoolingTest, AveMatchesCudaBody) {
  ExpectPooling<TypeParam>(
      CudnnCheck(PoolText("pool: AVE kernel_size: 2 stride: 2"), {{2, 3, 8, 6}}));
  // The padding counts in the divisor, as in Caffe.
  ExpectPooling<TypeParam>(
      CudnnCheck(PoolText("pool: AVE kernel_size: 3 stride: 1 pad: 1"), {{2, 2, 5, 5}}));
  ExpectPooling<TypeParam>(CudnnCheck(PoolText("pool: AVE global_pooling: true"), {{2, 5, 7, 7}}));
}

// Caffe rounds the output size up: a last window that starts inside the
// input but runs past the padding is one cuDNN would not compute.
TYPED_TEST(CudnnPoolingTest, WindowsPastThePaddingRunTheCudaBody) {
  CudnnCheck max = MaxPoolCheck("kernel_size: 3 stride: 2", {{2, 2, 8, 8}});
  max.expect_cudnn = false;
  ExpectPooling<TypeParam>(max);
  CudnnCheck ave(PoolText("pool: AVE kernel_size: 3 stride: 2"), {{2, 2, 8, 8}});
  ave.expect_cudnn = false;
  ExpectPooling<TypeParam>(ave);
}

// A window larger than the padded input: Caffe clips it (AVE divides by what
// lies inside), cuDNN's count would not.
TYPED_TEST(CudnnPoolingTest, WindowsLargerThanTheInputRunTheCudaBody) {
  CudnnCheck max = MaxPoolCheck("kernel_size: 3 stride: 2", {{1, 2, 2, 2}});
  max.expect_cudnn = false;
  ExpectPooling<TypeParam>(max);
  CudnnCheck ave(PoolText("pool: AVE kernel_size: 3 stride: 2"), {{1, 2, 2, 2}});
  ave.expect_cudnn = false;
  ExpectPooling<TypeParam>(ave);
}

TYPED_TEST(CudnnPoolingTest, ArgmaxTopRunsTheCudaBody) {
  CudnnCheck check = MaxPoolCheck("kernel_size: 2 stride: 2", {{2, 3, 8, 6}});
  check.tops = 2;
  check.expect_cudnn = false;
  ExpectPooling<TypeParam>(check);
}

TYPED_TEST(CudnnPoolingTest, StochasticRunsTheCudaBody) {
  LayerParameter param;
  ReadProtoFromString(PoolText("pool: STOCHASTIC kernel_size: 2 stride: 2"), "layer", &param);
  Blob<TypeParam> bottom(std::vector<int>{1, 1, 4, 4}), top;
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnPoolingLayer<TypeParam> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  EXPECT_FALSE(layer.uses_cudnn());
}

// A ReLU in place on the top (as in cifar10_quick) changes it before
// Backward: the gradient still goes to each window's maximum.
TYPED_TEST(CudnnPoolingTest, MaxGradientSurvivesAnInPlaceChangeOfTheTop) {
  CudnnCheck check = MaxPoolCheck("kernel_size: 2 stride: 2", {{2, 3, 6, 6}});
  check.after_forward_float = [](Blob<float>* top) {
    for (int i = 0; i < top->count(); ++i) top->mutable_cpu_data()[i] *= 0.5f;
  };
  check.after_forward_double = [](Blob<double>* top) {
    for (int i = 0; i < top->count(); ++i) top->mutable_cpu_data()[i] *= 0.5;
  };
  ExpectPooling<TypeParam>(check);
}

TYPED_TEST(CudnnPoolingTest, NumericalGradient) {
  for (const char* fields :
       {"pool: MAX kernel_size: 3 stride: 2 pad: 1", "pool: AVE kernel_size: 3 stride: 2 pad: 1"}) {
    SCOPED_TRACE(fields);
    LayerParameter param;
    ReadProtoFromString(PoolText(fields), "layer", &param);
    Blob<TypeParam> bottom(std::vector<int>{2, 2, 5, 5}), top;
    DistinctFill(&bottom, 7);
    std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
    CudnnPoolingLayer<TypeParam> layer(param);
    GradientChecker<TypeParam> checker(TypeParam(1e-2), TypeParam(1e-3));
    checker.CheckGradient(&layer, bottom_vec, top_vec);
    EXPECT_TRUE(layer.uses_cudnn());
  }
}

}  // namespace
}  // namespace crema
