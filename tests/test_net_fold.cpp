// Net::FoldIntoScales: a BatchNorm on stored statistics followed in place by
// a per-channel Scale runs as one pass each way on the CPU. The folded pair
// must compute what the unfolded one (engine CAFFE) computes, within float
// rounding: whole passes, and passes that stop between the two layers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "crema/filler.hpp"
#include "crema/net.hpp"
#include "crema/net_rewrites/fused_scale_layer.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// conv -> bn -> scale -> relu, in place on 'conv' after the convolution (or
// on NORMED, the BatchNorm's top), then an inner product and a loss.
// BATCH_NORM_PARAM and NORMED are replaced.
const char* kNet =
    "name: 'fold' force_backward: true "
    "layer { name: 'input' type: 'Input' top: 'data' top: 'label'"
    "  input_param { shape { dim: 2 dim: 3 dim: 5 dim: 4 } shape { dim: 2 } } }"
    "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
    "  convolution_param { num_output: 4 kernel_size: 3 pad: 1"
    "    weight_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'bn' type: 'BatchNorm' bottom: 'conv' top: 'NORMED' BATCH_NORM_PARAM }"
    "layer { name: 'scale' type: 'Scale' bottom: 'NORMED' top: 'NORMED'"
    "  scale_param { bias_term: true filler { type: 'gaussian' mean: 1 std: 0.5 }"
    "    bias_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'relu' type: 'ReLU' bottom: 'NORMED' top: 'NORMED' }"
    "layer { name: 'ip' type: 'InnerProduct' bottom: 'NORMED' top: 'ip'"
    "  inner_product_param { num_output: 3 weight_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' top: 'loss' }";

constexpr int kBatchNormLayer = 2, kScaleLayer = 3, kLastLayer = 6;

template <typename Dtype>
std::unique_ptr<Net<Dtype>> MakeFoldNet(const std::string& batch_norm_param, Phase phase,
                                        const std::string& normed = "conv") {
  std::string text = kNet;
  text.replace(text.find("BATCH_NORM_PARAM"), 16, batch_norm_param);
  for (size_t at; (at = text.find("NORMED")) != std::string::npos;) text.replace(at, 6, normed);
  NetParameter param = ParseNet(text);
  param.mutable_state()->set_phase(phase);
  param.set_engine_mode(NetParameter::AS_WRITTEN);  // engine CAFFE: the reference bodies
  return std::unique_ptr<Net<Dtype>>(new Net<Dtype>(param));
}

template <typename Dtype>
bool Folded(const Net<Dtype>& net) {
  const auto* scale = dynamic_cast<const FusedScaleLayer<Dtype>*>(net.layer_by_name("scale").get());
  return scale && scale->folds_batch_norm();
}

template <typename Dtype>
class NetFoldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Context::set_mode(Context::CPU);
    folded_ = MakeFoldNet<Dtype>("batch_norm_param { use_global_stats: true }", TRAIN);
    unfolded_ =
        MakeFoldNet<Dtype>("batch_norm_param { use_global_stats: true engine: CAFFE }", TRAIN);
    // Stored statistics far from 0 and 1 (mean, variance, scale factor 2),
    // the same weights and inputs in both nets.
    Context::set_random_seed(1701);
    auto& stats = folded_->layer_by_name("bn")->blobs();
    for (int c = 0; c < 4; ++c) {
      stats[0]->mutable_cpu_data()[c] = Dtype(2 * (c - 1.5));
      stats[1]->mutable_cpu_data()[c] = Dtype(0.5 + c);
    }
    stats[2]->mutable_cpu_data()[0] = Dtype(2);
    MakeTwins(folded_.get(), unfolded_.get());
  }

  // Compares data (or diffs) of a blob of both nets.
  void ExpectSame(const Blob<Dtype>& want, const Blob<Dtype>& got, bool diff,
                  const std::string& what) {
    ASSERT_EQ(want.count(), got.count()) << what;
    const Dtype* a = diff ? want.cpu_diff() : want.cpu_data();
    const Dtype* b = diff ? got.cpu_diff() : got.cpu_data();
    for (int i = 0; i < want.count(); ++i) {
      EXPECT_NEAR(a[i], b[i], Dtype(1e-4) * (1 + std::fabs(a[i]))) << what << " at " << i;
    }
  }
  void ExpectSameBlob(const std::string& name, bool diff) {
    ExpectSame(*unfolded_->blob_by_name(name), *folded_->blob_by_name(name), diff,
               name + (diff ? " diff" : " data"));
  }
  void ExpectSameParameterGradients() {
    for (size_t i = 0; i < folded_->params().size(); ++i) {
      ExpectSame(*unfolded_->params()[i], *folded_->params()[i], true,
                 "parameter " + std::to_string(i) + " gradient");
    }
  }

  std::unique_ptr<Net<Dtype>> folded_, unfolded_;
};

TYPED_TEST_SUITE(NetFoldTest, TestDtypes);

TYPED_TEST(NetFoldTest, FoldedPairMatchesTheUnfoldedOne) {
  EXPECT_TRUE(Folded(*this->folded_));
  EXPECT_FALSE(Folded(*this->unfolded_));
  for (int pass = 0; pass < 2; ++pass) {  // a second pass starts from a used state
    TypeParam folded_loss, unfolded_loss;
    this->folded_->Forward(&folded_loss);
    this->unfolded_->Forward(&unfolded_loss);
    EXPECT_NEAR(unfolded_loss, folded_loss, 1e-4 * (1 + std::fabs(unfolded_loss)));
    this->ExpectSameBlob("conv", false);
    this->folded_->Backward();
    this->unfolded_->Backward();
    this->ExpectSameBlob("data", true);
    this->ExpectSameParameterGradients();
  }
}

// A forward pass that stops at the BatchNorm leaves its normalised output;
// one that starts at the Scale then works on it. A backward pass that stops
// at the Scale leaves the Scale's bottom gradient; one from the BatchNorm
// down goes on from there.
TYPED_TEST(NetFoldTest, PassesStoppingBetweenTheTwoMatchTheUnfoldedOnes) {
  Net<TypeParam>* nets[] = {this->folded_.get(), this->unfolded_.get()};
  for (Net<TypeParam>* net : nets) net->ForwardFromTo(0, kBatchNormLayer);
  this->ExpectSameBlob("conv", false);
  for (Net<TypeParam>* net : nets) net->ForwardFromTo(kScaleLayer, kLastLayer);
  this->ExpectSameBlob("ip", false);
  for (Net<TypeParam>* net : nets) {
    net->Forward();
    net->BackwardFromTo(kLastLayer, kScaleLayer);
  }
  this->ExpectSameBlob("conv", true);
  for (Net<TypeParam>* net : nets) net->BackwardFromTo(kBatchNormLayer, 0);
  this->ExpectSameBlob("data", true);
  this->ExpectSameParameterGradients();
}

// Batch statistics, another engine, or a BatchNorm that is not in place on
// the Scale's blob: nothing folds.
TEST(NetFoldTest, FoldsOnlyStoredStatisticsInPlaceOnEngineDefault) {
  Context::set_mode(Context::CPU);
  EXPECT_TRUE(Folded(*MakeFoldNet<float>("", TEST)));  // stored statistics by default at TEST
  EXPECT_FALSE(Folded(*MakeFoldNet<float>("", TRAIN)));
  EXPECT_FALSE(Folded(*MakeFoldNet<float>("batch_norm_param { engine: CAFFE }", TEST)));
  EXPECT_FALSE(Folded(*MakeFoldNet<float>("batch_norm_param { engine: DNNL }", TEST)));
  EXPECT_FALSE(Folded(*MakeFoldNet<float>("", TEST, "normed")));
}

// An Eltwise SUM's bottom that a Split made holds the Eltwise's top gradient
// in its diff itself (Net::LendEltwiseGradients); the other bottom, which a
// ReLU works on in place (its backward pass rewrites that diff), does not.
// The reference net puts an identity Power layer between the Split and the
// Eltwise, so its Eltwise copies the gradient: the same gradients, bit for
// bit, pass after pass, the Eltwise's own top gradient included.
const char* kResidualNet =
    "name: 'residual' force_backward: true "
    "layer { name: 'input' type: 'Input' top: 'data' top: 'label'"
    "  input_param { shape { dim: 2 dim: 3 dim: 4 dim: 5 } shape { dim: 2 } } }"
    "layer { name: 'conv0' type: 'Convolution' bottom: 'data' top: 'a'"
    "  convolution_param { num_output: 3 kernel_size: 1 weight_filler { type: 'gaussian' } } }"
    "layer { name: 'conv1' type: 'Convolution' bottom: 'a' top: 'b'"
    "  convolution_param { num_output: 3 kernel_size: 3 pad: 1"
    "    weight_filler { type: 'gaussian' } } }"
    "layer { name: 'relu' type: 'ReLU' bottom: 'b' top: 'b' }"
    "SHORTCUT"
    "layer { name: 'sum' type: 'Eltwise' bottom: 'b' bottom: 'SHORT' top: 's' }"
    "layer { name: 'ip' type: 'InnerProduct' bottom: 's' top: 'ip'"
    "  inner_product_param { num_output: 3 weight_filler { type: 'gaussian' } } }"
    "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' top: 'loss' }";

std::unique_ptr<Net<float>> MakeResidualNet(bool identity_between) {
  std::string text = kResidualNet;
  text.replace(
      text.find("SHORTCUT"), 8,
      identity_between ? "layer { name: 'same' type: 'Power' bottom: 'a' top: 'a2' }" : "");
  text.replace(text.find("SHORT"), 5, identity_between ? "a2" : "a");
  NetParameter param = ParseNet(text);
  param.mutable_state()->set_phase(TRAIN);
  param.set_engine_mode(NetParameter::AS_WRITTEN);  // engine CAFFE: the reference bodies
  return std::unique_ptr<Net<float>>(new Net<float>(param));
}

TEST(NetEltwiseGradientTest, SplitBottomHoldsTheTopGradientItself) {
  Context::set_mode(Context::CPU);
  Context::set_random_seed(1701);
  std::unique_ptr<Net<float>> shared = MakeResidualNet(false), copied = MakeResidualNet(true);
  MakeTwins(shared.get(), copied.get());
  const auto holds_top_gradient = [](const Net<float>& net) {
    const int sum = LayerIndex(net, "sum");
    return net.bottom_vecs()[sum][1]->cpu_diff() == net.top_vecs()[sum][0]->cpu_diff() &&
           net.bottom_vecs()[sum][0]->cpu_diff() != net.top_vecs()[sum][0]->cpu_diff();
  };
  EXPECT_TRUE(holds_top_gradient(*shared));
  EXPECT_FALSE(holds_top_gradient(*copied));
  for (int pass = 0; pass < 2; ++pass) {
    for (Net<float>* net : {shared.get(), copied.get()}) {
      net->ClearParamDiffs();
      net->Forward();
      net->Backward();
    }
    for (const char* blob : {"data", "s"}) {
      const Blob<float>& want = *copied->blob_by_name(blob);
      const Blob<float>& got = *shared->blob_by_name(blob);
      for (int i = 0; i < want.count(); ++i) {
        ASSERT_EQ(want.cpu_diff()[i], got.cpu_diff()[i]) << blob << " diff at " << i;
      }
    }
    for (size_t p = 0; p < shared->params().size(); ++p) {
      const Blob<float>& a = *copied->params()[p];
      const Blob<float>& b = *shared->params()[p];
      for (int i = 0; i < a.count(); ++i) ASSERT_EQ(a.cpu_diff()[i], b.cpu_diff()[i]) << p;
    }
  }
}

}  // namespace
}  // namespace crema
