// The oneDNN LRN against the reference one, across channels and within a
// channel; and numerical gradient checks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crema/dnnl/dnnl_lrn_layer.hpp"
#include "crema/layers/lrn_layer.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

std::string LrnLayerText(const std::string& lrn_param) {
  return "name: 'norm' type: 'LRN' lrn_param { " + lrn_param + " }";
}

TEST(DnnlLRNLayerTest, AcrossChannelsMatchesReference) {
  ExpectDnnlMatchesReference<LRNLayer, DnnlLRNLayer>(
      {LrnLayerText("local_size: 5 alpha: 0.5 beta: 0.75 k: 2"), {{2, 7, 3, 4}}});
}

TEST(DnnlLRNLayerTest, WithinChannelMatchesReference) {
  ExpectDnnlMatchesReference<LRNLayer, DnnlLRNLayer>(
      {LrnLayerText("local_size: 3 alpha: 0.5 beta: 0.75 norm_region: WITHIN_CHANNEL"),
       {{2, 3, 5, 6}}});
}

void ExpectLrnGradient(const std::string& lrn_param) {
  SCOPED_TRACE(lrn_param);
  LayerParameter param;
  ReadProtoFromString(LrnLayerText(lrn_param), "layer", &param);
  Blob<float> bottom(std::vector<int>{2, 5, 3, 3}), top;
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlLRNLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-2);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

TEST(DnnlLRNLayerTest, NumericalGradientAcrossChannels) {
  ExpectLrnGradient("local_size: 3 alpha: 0.5 beta: 0.75");
}

TEST(DnnlLRNLayerTest, NumericalGradientWithinChannel) {
  ExpectLrnGradient("local_size: 3 alpha: 0.5 beta: 0.75 norm_region: WITHIN_CHANNEL");
}

// Engine DEFAULT: oneDNN for the across-channels forward of a TEST-phase
// net only; the reference body for training (oneDNN's backward on plain
// blobs is many times slower) and within a channel.
TEST(DnnlLRNLayerTest, DefaultEngineRunsOneDnnForTestPhaseAcrossChannelsOnly) {
  for (const Phase phase : {TRAIN, TEST}) {
    for (const std::string region : {"ACROSS_CHANNELS", "WITHIN_CHANNEL"}) {
      SCOPED_TRACE(region + (phase == TEST ? " TEST" : " TRAIN"));
      LayerParameter param;
      ReadProtoFromString(LrnLayerText("local_size: 3 norm_region: " + region), "layer", &param);
      param.set_phase(phase);
      Blob<float> bottom(std::vector<int>{2, 5, 3, 3}), top;
      std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
      DnnlLRNLayer<float> by_default(param), always(WithEngine(param, Engine::kDnnl));
      by_default.SetUp(bottom_vec, top_vec);
      always.SetUp(bottom_vec, top_vec);
      EXPECT_EQ(by_default.uses_dnnl(), phase == TEST && region == "ACROSS_CHANNELS");
      EXPECT_TRUE(always.uses_dnnl());
    }
  }
}

}  // namespace
}  // namespace crema
