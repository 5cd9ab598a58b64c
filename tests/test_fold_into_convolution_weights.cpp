// The backend-free rewrite fold_into_convolution_weights.cpp: in a net made
// to run forward, in every build, a reference convolution and the BatchNorm
// on stored statistics and the Scale in place after it run as one
// convolution with folded weights and bias. It must compute what the plain
// layers compute, within float rounding, with the weights as they are at
// each pass (changed after the rewrite too), and leave the plain layers'
// output where a pass stops inside the chain.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/batch_norm_layer.hpp"
#include "crema/layers/conv_layer.hpp"
#include "crema/layers/scale_layer.hpp"
#include "crema/net.hpp"
#include "crema/net_rewrites/folded_chain.hpp"
#include "crema/net_rewrites/net_rewrite.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

const char* kRewriteName = "BatchNorm and Scale into convolution weights";

void FillGaussian(Blob<float>* blob, float mean, float std) {
  FillerParameter param;
  param.set_type("gaussian");
  param.set_mean(mean);
  param.set_std(std);
  GetFiller<float>(param)->Fill(blob);
}

std::vector<float> Values(const Blob<float>& blob) {
  return std::vector<float>(blob.cpu_data(), blob.cpu_data() + blob.count());
}

void ExpectNear(const std::vector<float>& want, const Blob<float>& got, const std::string& what) {
  ASSERT_EQ(want.size(), static_cast<size_t>(got.count())) << what;
  for (int i = 0; i < got.count(); ++i) {
    ASSERT_NEAR(want[i], got.cpu_data()[i], 1e-4f * (1 + std::fabs(want[i])))
        << what << " at " << i;
  }
}

// A reference convolution (3 to 4 channels, 3x3, with bias), a BatchNorm on
// stored statistics and a Scale with bias, in place on its top, made as the
// reference classes whatever the build, and the graph the rewrites see.
class FoldIntoConvolutionWeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Context::set_mode(Context::CPU);
    Context::set_random_seed(1701);
    LayerParameter conv;
    conv.set_name("conv");
    conv.set_type("Convolution");
    conv.mutable_convolution_param()->add_kernel_size(3);
    conv.mutable_convolution_param()->add_pad(1);
    conv.mutable_convolution_param()->set_num_output(4);
    conv_param_ = conv;
    LayerParameter bn;
    bn.set_name("bn");
    bn.set_type("BatchNorm");
    bn.mutable_batch_norm_param()->set_use_global_stats(true);
    bn_param_ = bn;
    LayerParameter scale;
    scale.set_name("scale");
    scale.set_type("Scale");
    scale.mutable_scale_param()->set_bias_term(true);
    scale_param_ = scale;
    bottom_.Reshape({2, 3, 5, 4});
    FillGaussian(&bottom_, 0, 1);
  }

  // Makes the three layers on bottom_ and top_ (conv_param_ as it is then),
  // with Gaussian weights and statistics far from 0 and 1.
  void MakeLayers() {
    layers_ = {std::make_shared<ConvolutionLayer<float>>(conv_param_),
               std::make_shared<BatchNormLayer<float>>(bn_param_),
               std::make_shared<ScaleLayer<float>>(scale_param_)};
    bottoms_ = {{&bottom_}, {&top_}, {&top_}};
    tops_ = {{&top_}, {&top_}, {&top_}};
    for (size_t i = 0; i < layers_.size(); ++i) layers_[i]->SetUp(bottoms_[i], tops_[i]);
    plain_ = layers_;
    FillGaussian(plain_[0]->blobs()[0].get(), 0, 0.5f);
    FillGaussian(plain_[0]->blobs()[1].get(), 0, 0.5f);
    SetStatistics(0);
    FillGaussian(plain_[2]->blobs()[0].get(), 1, 0.5f);
    FillGaussian(plain_[2]->blobs()[1].get(), 0, 0.5f);
  }

  // The BatchNorm's stored statistics (sums), shifted by `shift`, with the
  // average factor 2.
  void SetStatistics(float shift) {
    auto& stats = plain_[1]->blobs();
    for (int c = 0; c < 4; ++c) {
      stats[0]->mutable_cpu_data()[c] = 2 * (c - 1.5f) + shift;
      stats[1]->mutable_cpu_data()[c] = 0.5f + c + shift;
    }
    stats[2]->mutable_cpu_data()[0] = 2;
  }

  // Runs the registered rewrite on the graph of layers_.
  std::vector<Seam> Rewrite() {
    const std::vector<std::vector<int>> bottom_ids{{0}, {1}, {1}}, top_ids{{1}, {1}, {1}};
    const std::vector<std::vector<bool>> need_backward{{false}, {false}, {false}};
    NetGraph<float> graph{layers_, bottoms_,      tops_, bottom_ids,
                          top_ids, need_backward, false, true};
    std::vector<Seam> seams;
    for (const auto& entry : RewriteList<float>::Entries()) {
      if (entry.name == kRewriteName) entry.rewrite(graph, &seams);
    }
    return seams;
  }

  // Runs layers first..last of `layers` forward (each reshaped first).
  void Forward(const std::vector<std::shared_ptr<Layer<float>>>& layers, int first, int last) {
    for (int i = first; i <= last; ++i) layers[i]->Forward(bottoms_[i], tops_[i]);
  }

  // What the plain layers write into top_ from bottom_, up to layer last.
  std::vector<float> PlainOutput(int last = 2) {
    Forward(plain_, 0, last);
    return Values(top_);
  }

  bool Folded() const {
    for (const auto& layer : layers_) {
      if (!dynamic_cast<FoldedLayer*>(layer.get())) return false;
    }
    return true;
  }

  LayerParameter conv_param_, bn_param_, scale_param_;
  Blob<float> bottom_, top_;
  std::vector<std::shared_ptr<Layer<float>>> layers_, plain_;
  std::vector<std::vector<Blob<float>*>> bottoms_, tops_;
};

TEST_F(FoldIntoConvolutionWeightsTest, IsInTheListAfterTheBackendsLowerings) {
  const auto entries = RewriteList<float>::Entries();
  int found = -1;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name != kRewriteName) continue;
    found = static_cast<int>(i);
    EXPECT_EQ(entries[i].stage, RewriteStage::kFoldWeights);
  }
  ASSERT_GE(found, 0) << "no rewrite '" << kRewriteName << "' registered";
  for (int i = 0; i < found; ++i) EXPECT_EQ(entries[i].stage, RewriteStage::kLowerChains);
}

TEST_F(FoldIntoConvolutionWeightsTest, TheChainComputesWhatThePlainLayersCompute) {
  MakeLayers();
  const std::vector<float> want = PlainOutput();
  const std::vector<Seam> seams = Rewrite();
  ASSERT_TRUE(Folded());
  ASSERT_EQ(seams.size(), 1u);
  EXPECT_EQ(seams[0].first, 0);
  EXPECT_EQ(seams[0].last, 2);
  EXPECT_STREQ(layers_[0]->type(), "Convolution");
  EXPECT_EQ(layers_[0]->blobs(), plain_[0]->blobs()) << "the slot keeps the net's weights";
  top_.scale_data(0);
  Forward(layers_, 0, 2);
  ExpectNear(want, top_, "folded pass");
}

TEST_F(FoldIntoConvolutionWeightsTest, APassReadsTheWeightsAsTheyAreThen) {
  MakeLayers();
  Rewrite();
  Forward(layers_, 0, 2);
  // New statistics, scale and convolution weights after a folded pass (as
  // weights copied into a built net): the next pass folds them.
  SetStatistics(1);
  FillGaussian(plain_[2]->blobs()[0].get(), 2, 0.5f);
  FillGaussian(plain_[0]->blobs()[0].get(), 0, 0.5f);
  const std::vector<float> want = PlainOutput();
  Forward(layers_, 0, 2);
  ExpectNear(want, top_, "pass after the weights changed");
}

TEST_F(FoldIntoConvolutionWeightsTest, APassThatEndsInsideTheChainLeavesThePlainOutput) {
  MakeLayers();
  const std::vector<float> want = PlainOutput(1);  // the BatchNorm's output
  const std::vector<Seam> seams = Rewrite();
  ASSERT_EQ(seams.size(), 1u);
  Forward(layers_, 0, 1);
  seams[0].finish_forward(1);
  ExpectNear(want, top_, "pass ending at the BatchNorm");
}

TEST_F(FoldIntoConvolutionWeightsTest, LeavesPlainWhatItDoesNotFold) {
  // Engine CAFFE: Caffe's computation asked for.
  conv_param_.mutable_convolution_param()->set_engine(ConvolutionParameter::CAFFE);
  MakeLayers();
  Rewrite();
  EXPECT_FALSE(Folded()) << "engine CAFFE";
  // A BatchNorm on batch statistics, right after the convolution: nothing
  // after it folds either.
  conv_param_.mutable_convolution_param()->clear_engine();
  bn_param_.mutable_batch_norm_param()->set_use_global_stats(false);
  MakeLayers();
  Rewrite();
  EXPECT_FALSE(Folded()) << "batch statistics";
  EXPECT_EQ(dynamic_cast<FoldedLayer*>(layers_[0].get()), nullptr);
}

// The same through Net: a deploy net (TEST phase) folds BatchNorm and Scale
// into its convolution whatever the build (a oneDNN build's lowering folds
// it, else this rewrite), computes what the net that may run backward (no
// rewrite) computes, and folds weights copied in after it was built.
const char* kDeployNet =
    "name: 'deploy' FORCE "
    "layer { name: 'data' type: 'Input' top: 'data'"
    "  input_param { shape { dim: 2 dim: 3 dim: 6 dim: 5 } } }"
    "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
    "  convolution_param { num_output: 4 kernel_size: 3 pad: 1"
    "    weight_filler { type: 'gaussian' std: 0.5 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'bn' type: 'BatchNorm' bottom: 'conv' top: 'conv' }"
    "layer { name: 'scale' type: 'Scale' bottom: 'conv' top: 'conv'"
    "  scale_param { bias_term: true filler { type: 'gaussian' mean: 1 std: 0.5 }"
    "    bias_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'relu' type: 'ReLU' bottom: 'conv' top: 'conv' }";

std::unique_ptr<Net<float>> MakeDeployNet(bool force_backward) {
  std::string text = kDeployNet;
  text.replace(text.find("FORCE"), 5, force_backward ? "force_backward: true" : "");
  NetParameter param = ParseNet(text);
  param.mutable_state()->set_phase(TEST);
  return std::make_unique<Net<float>>(param);
}

TEST(NetFoldIntoConvolutionTest, ADeployNetFoldsBatchNormAndScaleInEveryBuild) {
  Context::set_mode(Context::CPU);
  std::unique_ptr<Net<float>> plain = MakeDeployNet(true);
  std::unique_ptr<Net<float>> folded = MakeDeployNet(false);
  for (const char* name : {"conv", "bn", "scale"}) {
    EXPECT_EQ(dynamic_cast<FoldedLayer*>(plain->layer_by_name(name).get()), nullptr) << name;
    EXPECT_NE(dynamic_cast<FoldedLayer*>(folded->layer_by_name(name).get()), nullptr) << name;
  }
  // Statistics far from 0 and 1, then the plain net's weights copied into
  // the built folded net.
  auto& stats = plain->layer_by_name("bn")->blobs();
  for (int c = 0; c < 4; ++c) {
    stats[0]->mutable_cpu_data()[c] = 3.0f * c - 4;
    stats[1]->mutable_cpu_data()[c] = 1.5f + c;
  }
  stats[2]->mutable_cpu_data()[0] = 3;
  folded->Forward();  // a first pass with the fillers' weights
  ShareWeightsAndInput(plain.get(), folded.get());
  plain->Forward();
  folded->Forward();
  ExpectNear(Values(*plain->blob_by_name("conv")), *folded->blob_by_name("conv"), "deploy output");
}

}  // namespace
}  // namespace crema
