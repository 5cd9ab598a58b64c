// oneDNN's lowering dnnl_hand_blocked_outputs.cpp: a oneDNN convolution
// hands its output over in its blocked layout to the per-channel Scale in
// place on its top.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "crema/dnnl/channel_blocks.hpp"
#include "crema/net.hpp"
#include "crema/net_rewrites/fused_scale_layer.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"

namespace crema {
namespace {
// A oneDNN convolution's output handed in its blocked layout to the Scale in
// place on its top (Net::HandConvolutionOutputsToScales), after a folded
// BatchNorm or right after the convolution. Compared with the same net whose
// Scale reads the blob (the BatchNorm on engine CAFFE in between): the same
// values within float rounding, in whole passes and in passes that stop
// between the convolution and the Scale. 16 input and 32 output channels
// (oneDNN's blocks), 6x5 positions (a ragged last tile).
const char* kHandedNet =
    "name: 'handed' force_backward: true "
    "layer { name: 'input' type: 'Input' top: 'data' top: 'label'"
    "  input_param { shape { dim: 2 dim: 16 dim: 6 dim: 5 } shape { dim: 2 } } }"
    "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
    "  convolution_param { num_output: 32 kernel_size: 3 pad: 1 engine: DNNL"
    "    weight_filler { type: 'gaussian' std: 0.2 } } }"
    "BATCH_NORM"
    "layer { name: 'scale' type: 'Scale' bottom: 'conv' top: 'conv'"
    "  scale_param { bias_term: true filler { type: 'gaussian' mean: 1 std: 0.5 }"
    "    bias_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'relu' type: 'ReLU' bottom: 'conv' top: 'conv' }"
    "layer { name: 'ip' type: 'InnerProduct' bottom: 'conv' top: 'ip'"
    "  inner_product_param { num_output: 3 weight_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' top: 'loss' }";

// depthwise: the convolution a fork's DepthwiseConvolution over 32 channels.
std::unique_ptr<Net<float>> MakeHandedNet(const std::string& batch_norm, bool depthwise = false) {
  std::string text = kHandedNet;
  text.replace(text.find("BATCH_NORM"), 10, batch_norm);
  if (depthwise) {
    text.replace(text.find("dim: 16"), 7, "dim: 32");
    text.replace(text.find("'Convolution'"), 13, "'DepthwiseConvolution'");
  }
  NetParameter param = ParseNet(text);
  param.mutable_state()->set_phase(TRAIN);
  param.set_engine_mode(NetParameter::AS_WRITTEN);  // engine CAFFE: the reference bodies
  return std::unique_ptr<Net<float>>(new Net<float>(param));
}

bool TakesBlocks(const Net<float>& net) {
  const auto* scale = dynamic_cast<const FusedScaleLayer<float>*>(net.layer_by_name("scale").get());
  return scale && scale->takes_handed_bottom();
}

class NetHandedOutputTest : public ::testing::TestWithParam<bool> {
 protected:
  // GetParam(): a BatchNorm between the convolution and the Scale.
  void SetUp() override {
    if (!ChannelBlocksSupported()) GTEST_SKIP() << "this CPU has no AVX-512: nothing is handed";
    Context::set_mode(Context::CPU);
    const std::string stats = "use_global_stats: true";
    const std::string bn =
        "layer { name: 'bn' type: 'BatchNorm' bottom: 'conv' top: 'conv'"
        "  batch_norm_param { " +
        stats + " ENGINE } }";
    const auto with_engine = [&](const std::string& engine) {
      std::string text = bn;
      text.replace(text.find("ENGINE"), 6, engine);
      return text;
    };
    // Without a BatchNorm the reference net gets an identity Power layer
    // between the two, so its Scale reads the blob.
    handed_ = MakeHandedNet(GetParam() ? with_engine("") : "");
    reference_ =
        MakeHandedNet(GetParam() ? with_engine("engine: CAFFE")
                                 : "layer { name: 'bn' type: 'Power' bottom: 'conv' top: 'conv' }");
    Context::set_random_seed(1701);
    if (GetParam()) {
      auto& stats_blobs = handed_->layer_by_name("bn")->blobs();
      for (int c = 0; c < 32; ++c) {
        stats_blobs[0]->mutable_cpu_data()[c] = 0.1f * (c - 16);
        stats_blobs[1]->mutable_cpu_data()[c] = 0.5f + 0.1f * c;
      }
      stats_blobs[2]->mutable_cpu_data()[0] = 1;
    }
    MakeTwins(handed_.get(), reference_.get());
  }

  void ExpectSameBlob(const std::string& name, bool diff) {
    const Blob<float>& want = *reference_->blob_by_name(name);
    const Blob<float>& got = *handed_->blob_by_name(name);
    const float* a = diff ? want.cpu_diff() : want.cpu_data();
    const float* b = diff ? got.cpu_diff() : got.cpu_data();
    for (int i = 0; i < want.count(); ++i) {
      ASSERT_NEAR(a[i], b[i], 1e-4f * (1 + std::fabs(a[i])))
          << name << (diff ? " diff" : " data") << " at " << i;
    }
  }

  std::unique_ptr<Net<float>> handed_, reference_;
};

TEST_P(NetHandedOutputTest, ScaleReadingTheBlocksMatchesOneReadingTheBlob) {
  EXPECT_TRUE(TakesBlocks(*handed_));
  EXPECT_FALSE(TakesBlocks(*reference_));
  for (int pass = 0; pass < 2; ++pass) {
    float handed_loss, reference_loss;
    handed_->Forward(&handed_loss);
    reference_->Forward(&reference_loss);
    EXPECT_NEAR(reference_loss, handed_loss, 1e-4 * (1 + std::fabs(reference_loss)));
    ExpectSameBlob("conv", false);
    ExpectSameBlob("ip", false);
    handed_->Backward();
    reference_->Backward();
    ExpectSameBlob("data", true);
    for (size_t i = 0; i < handed_->params().size(); ++i) {
      const Blob<float>& want = *reference_->params()[i];
      const Blob<float>& got = *handed_->params()[i];
      for (int j = 0; j < want.count(); ++j) {
        ASSERT_NEAR(want.cpu_diff()[j], got.cpu_diff()[j],
                    1e-4f * (1 + std::fabs(want.cpu_diff()[j])))
            << "parameter " << i << " gradient at " << j;
      }
    }
  }
}

// A pass that stops at the convolution (or the BatchNorm) leaves the
// convolution's output in the blob; one that starts at the Scale reads it
// there.
TEST_P(NetHandedOutputTest, PassesStoppingBeforeTheScaleLeaveTheOutputInTheBlob) {
  Net<float>* nets[] = {handed_.get(), reference_.get()};
  for (const std::string stop : {"conv", "bn"}) {
    if (stop == "bn" && !GetParam()) continue;
    for (Net<float>* net : nets) net->ForwardFromTo(0, LayerIndex(*net, stop));
    ExpectSameBlob("conv", false);
    for (Net<float>* net : nets) {
      net->ForwardFromTo(LayerIndex(*net, stop) + 1, static_cast<int>(net->layers().size()) - 1);
    }
    ExpectSameBlob("conv", false);
    ExpectSameBlob("ip", false);
  }
}

INSTANTIATE_TEST_SUITE_P(BatchNormBetween, NetHandedOutputTest, ::testing::Bool());

// The forks' depthwise type hands its output over as a Convolution does,
// to the values of a net whose Scale reads the blob.
TEST(NetHandedOutputDepthwiseTest, DepthwiseConvolutionHandsItsOutputOver) {
  if (!ChannelBlocksSupported()) GTEST_SKIP() << "this CPU has no AVX-512: nothing is handed";
  Context::set_mode(Context::CPU);
  const auto handed = MakeHandedNet("", true);
  const auto reference =
      MakeHandedNet("layer { name: 'bn' type: 'Power' bottom: 'conv' top: 'conv' }", true);
  EXPECT_TRUE(TakesBlocks(*handed));
  EXPECT_FALSE(TakesBlocks(*reference));
  MakeTwins(handed.get(), reference.get());
  float handed_loss, reference_loss;
  handed->Forward(&handed_loss);
  reference->Forward(&reference_loss);
  EXPECT_NEAR(reference_loss, handed_loss, 1e-4 * (1 + std::fabs(reference_loss)));
  handed->Backward();
  reference->Backward();
  const Blob<float>& want = *reference->blob_by_name("data");
  const Blob<float>& got = *handed->blob_by_name("data");
  for (int i = 0; i < want.count(); ++i) {
    ASSERT_NEAR(want.cpu_diff()[i], got.cpu_diff()[i], 1e-4f * (1 + std::fabs(want.cpu_diff()[i])))
        << "data diff at " << i;
  }
}

}  // namespace
}  // namespace crema
