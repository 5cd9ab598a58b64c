// The cuDNN BatchNorm against the CUDA body: batch statistics (the top, the
// bottom gradient, and Caffe's running sums and factor after several
// passes), global statistics, in place and not, 2-D and 4-D bottoms; a batch
// of one value per channel runs the CUDA body; numerical gradients. GPU only.
#include <gtest/gtest.h>

#include <vector>

#include "crema/cudnn/cudnn_batch_norm_layer.hpp"
#include "cudnn/cudnn_reference_check.hpp"
#include "gradient_checker.hpp"

namespace crema {
namespace {

template <typename Dtype>
using CudnnBatchNormTest = CudnnLayerTest<Dtype>;
TYPED_TEST_SUITE(CudnnBatchNormTest, CudnnDtypes);

template <typename Dtype>
void ExpectBatchNorm(const CudnnCheck& check) {
  ExpectCudnnMatchesReference<BatchNormLayer, CudnnBatchNormLayer, Dtype>(check);
}

std::string BatchNormText(const std::string& fields) {
  return "name: 'bn' type: 'BatchNorm' batch_norm_param { " + fields + " }";
}

// Three passes: the running sums and the factor accumulate as Caffe's do.
TYPED_TEST(CudnnBatchNormTest, BatchStatisticsMatchCudaBody) {
  for (const bool in_place : {false, true}) {
    for (const std::vector<int>& shape : {std::vector<int>{4, 3, 5, 6}, std::vector<int>{8, 5}}) {
      CudnnCheck check(BatchNormText("use_global_stats: false moving_average_fraction: 0.9"),
                       {shape});
      check.in_place = in_place;
      check.extra_forwards = 2;
      ExpectBatchNorm<TypeParam>(check);
    }
  }
}

// Running sums and a factor other than 1: the statistics are sum / factor.
TYPED_TEST(CudnnBatchNormTest, GlobalStatisticsMatchCudaBody) {
  for (const bool in_place : {false, true}) {
    CudnnCheck check(BatchNormText("use_global_stats: true eps: 0.001"), {{3, 4, 5, 5}});
    check.in_place = in_place;
    check.parameters = {{1, -2, 3, 0.5}, {4, 1, 9, 2}, {2.5}};
    ExpectBatchNorm<TypeParam>(check);
  }
}

// Statistics loaded with a factor of 0 (none taken yet) but sums that are not
// 0: the first batch's update keeps the decayed sums, as the reference does.
TYPED_TEST(CudnnBatchNormTest, FirstBatchAfterAFactorOfZero) {
  CudnnCheck check(BatchNormText("use_global_stats: false moving_average_fraction: 0.9"),
                   {{4, 4, 3, 3}});
  check.parameters = {{1, -2, 3, 0.5}, {4, 1, 9, 2}, {0}};
  ExpectBatchNorm<TypeParam>(check);
}

TYPED_TEST(CudnnBatchNormTest, OneValuePerChannelRunsTheCudaBody) {
  LayerParameter param;
  ReadProtoFromString(BatchNormText("use_global_stats: false"), "layer", &param);
  Blob<TypeParam> bottom(std::vector<int>{1, 3}), top;
  std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
  CudnnBatchNormLayer<TypeParam> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  EXPECT_FALSE(layer.uses_cudnn());
}

TYPED_TEST(CudnnBatchNormTest, NumericalGradient) {
  for (const char* fields : {"use_global_stats: false", "use_global_stats: true"}) {
    SCOPED_TRACE(fields);
    LayerParameter param;
    ReadProtoFromString(BatchNormText(fields), "layer", &param);
    Blob<TypeParam> bottom(std::vector<int>{3, 2, 3, 2}), top;
    GaussianFill(&bottom, TypeParam(1));
    std::vector<Blob<TypeParam>*> bottom_vec{&bottom}, top_vec{&top};
    CudnnBatchNormLayer<TypeParam> layer(param);
    layer.SetUp(bottom_vec, top_vec);
    // Statistics to normalise with where they are global.
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 2; ++c) layer.blobs()[b]->mutable_cpu_data()[c] = TypeParam(0.5 + c);
    }
    layer.blobs()[2]->mutable_cpu_data()[0] = 1;
    GradientChecker<TypeParam> checker(TypeParam(1e-2), TypeParam(1e-3));
    checker.CheckGradient(&layer, bottom_vec, top_vec);
    EXPECT_TRUE(layer.uses_cudnn());
  }
}

}  // namespace
}  // namespace crema
