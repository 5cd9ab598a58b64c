// The oneDNN batch normalisation against the reference one: batch statistics
// (4-D, 2-D, in place), which also update the running statistics, and global
// statistics; numerical gradient checks in both modes.
#include <gtest/gtest.h>

#include <vector>

#include "crema/dnnl/dnnl_batch_norm_layer.hpp"
#include "crema/layers/batch_norm_layer.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// Running statistics as after a few batches: sums and their factor.
void GiveRunningStatistics(Layer<float>* layer) {
  const auto& blobs = layer->blobs();
  for (int c = 0; c < blobs[0]->count(); ++c) {
    blobs[0]->mutable_cpu_data()[c] = 0.3f * c - 0.5f;
    blobs[1]->mutable_cpu_data()[c] = 1.5f + 0.5f * c;
  }
  blobs[2]->mutable_cpu_data()[0] = 2.5f;
}

TEST(DnnlBatchNormLayerTest, BatchStatisticsMatchReference) {
  DnnlCheck check{"name: 'bn' type: 'BatchNorm'", {{4, 3, 2, 5}}};
  check.prepare = GiveRunningStatistics;
  ExpectDnnlMatchesReference<BatchNormLayer, DnnlBatchNormLayer>(check);
}

TEST(DnnlBatchNormLayerTest, TwoAxesInPlaceMatchReference) {
  DnnlCheck check{"name: 'bn' type: 'BatchNorm'", {{6, 4}}};
  check.in_place = true;
  ExpectDnnlMatchesReference<BatchNormLayer, DnnlBatchNormLayer>(check);
}

TEST(DnnlBatchNormLayerTest, GlobalStatisticsMatchReference) {
  DnnlCheck check{"name: 'bn' type: 'BatchNorm' batch_norm_param { use_global_stats: true }",
                  {{3, 4, 2, 3}}};
  check.prepare = GiveRunningStatistics;
  ExpectDnnlMatchesReference<BatchNormLayer, DnnlBatchNormLayer>(check);
}

void ExpectBatchNormGradient(const char* layer_text) {
  SCOPED_TRACE(layer_text);
  LayerParameter param;
  ReadProtoFromString(layer_text, "layer", &param);
  Blob<float> bottom(std::vector<int>{3, 2, 2, 3}), top;
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlBatchNormLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-2);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

TEST(DnnlBatchNormLayerTest, NumericalGradientBatchStatistics) {
  ExpectBatchNormGradient("name: 'bn' type: 'BatchNorm'");
}

TEST(DnnlBatchNormLayerTest, NumericalGradientGlobalStatistics) {
  ExpectBatchNormGradient(
      "name: 'bn' type: 'BatchNorm' batch_norm_param { use_global_stats: true }");
}

}  // namespace
}  // namespace crema
