// MultiBoxLoss: box encoding undoes decoding for every code type; matching
// (bipartite, then per prediction) and hard negative mining by hand; a
// 3-prior, 2-box case whose matches, mined negative and loss are worked out
// below; numerical gradients to loc and conf with and without mining;
// refused settings named.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "crema/detection/matching.hpp"
#include "crema/layers/multibox_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

using ssd::DetectionBox;
using ssd::GroundTruth;

TEST(MultiBoxEncodingTest, EncodeUndoesDecodeForEveryCodeType) {
  const DetectionBox prior{0.1f, 0.2f, 0.5f, 0.6f}, box{0.15f, 0.1f, 0.7f, 0.55f};
  const float variance[4] = {0.1f, 0.1f, 0.2f, 0.2f};
  for (auto code : {PriorBoxParameter::CORNER, PriorBoxParameter::CENTER_SIZE,
                    PriorBoxParameter::CORNER_SIZE}) {
    for (bool in_target : {false, true}) {
      const DetectionBox back = ssd::DecodeBox(
          prior, variance, ssd::EncodeBox(prior, variance, box, code, in_target), code, in_target);
      EXPECT_NEAR(back.xmin, box.xmin, 1e-6) << code;
      EXPECT_NEAR(back.ymin, box.ymin, 1e-6) << code;
      EXPECT_NEAR(back.xmax, box.xmax, 1e-6) << code;
      EXPECT_NEAR(back.ymax, box.ymax, 1e-6) << code;
    }
  }
}

GroundTruth Truth(int label, DetectionBox box) {
  GroundTruth truth;
  truth.label = label;
  truth.box = box;
  return truth;
}

// Truth 0 overlaps priors 0, 1 and 2 by 0.8, 0.6 and 0.2; truth 1 overlaps
// prior 2 alone, by 0.5.
TEST(MultiBoxMatchingTest, BipartiteThenPerPrediction) {
  const std::vector<DetectionBox> priors = {
      {0, 0, 0.5f, 0.5f}, {0, 0, 0.4f, 0.3f}, {0.25f, 0, 0.75f, 0.5f}};
  const std::vector<GroundTruth> truths = {Truth(1, {0, 0, 0.4f, 0.5f}),
                                           Truth(2, {0.5f, 0, 0.75f, 0.5f})};
  const std::vector<bool> none(3, false);
  const ssd::PriorMatches bipartite = ssd::MatchPriors(priors, truths, false, 0.5f, none);
  EXPECT_EQ(bipartite.truth, (std::vector<int>{0, -1, 1}));
  EXPECT_NEAR(bipartite.overlap[1], 0.6f, 1e-6);
  // Per prediction adds prior 1 (0.6 >= 0.5) to truth 0.
  const ssd::PriorMatches both = ssd::MatchPriors(priors, truths, true, 0.5f, none);
  EXPECT_EQ(both.truth, (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(both.matched(), 3);
  // An ignored prior takes no part: truth 0 goes to prior 1.
  const ssd::PriorMatches ignoring =
      ssd::MatchPriors(priors, truths, false, 0.5f, {true, false, false});
  EXPECT_EQ(ignoring.truth, (std::vector<int>{-1, 0, 1}));
}

TEST(MultiBoxMatchingTest, MiningTakesTheHardestEligibleNegatives) {
  ssd::PriorMatches matches;
  matches.truth = {0, -1, -1, -1, -1, -1};
  matches.overlap = {0.9f, 0.1f, 0.6f, 0.2f, 0.f, 0.3f};
  const std::vector<float> loss = {9, 1, 8, 3, 3, 2};
  // Prior 2 overlaps too much (0.6 >= 0.5); two negatives per match: the
  // losses 3 and 3 (priors 3 and 4, lower index first), not 2 or 1.
  EXPECT_EQ(ssd::MineNegatives(matches, loss, 2, 0.5f), (std::vector<int>{3, 4}));
  EXPECT_EQ(ssd::MineNegatives(matches, loss, 10, 0.5f), (std::vector<int>{3, 4, 5, 1}));
  matches.truth[0] = -1;  // no match, no negatives
  EXPECT_TRUE(ssd::MineNegatives(matches, loss, 3, 0.5f).empty());
}

TEST(MultiBoxMatchingTest, GroundTruthRowsAreReadAndCheckedByRow) {
  const std::vector<float> rows = {0, 1, 0, 0.1f, 0.1f, 0.2f, 0.2f, 0,    // image 0
                                   -1, -1, -1, -1, -1, -1, -1, -1,        // padding
                                   1, 2, 0, 0.3f, 0.3f, 0.4f, 0.4f, 1};   // image 1, difficult
  auto truths = ssd::ReadGroundTruths(rows.data(), 3, 2, true, 0, "gt");
  ASSERT_EQ(truths.size(), 2u);
  EXPECT_EQ(truths[0].size(), 1u);
  EXPECT_EQ(truths[1][0].label, 2);
  EXPECT_TRUE(ssd::ReadGroundTruths(rows.data(), 3, 2, false, 0, "gt")[1].empty());
  std::vector<float> bad = rows;
  bad[5] = 0.05f;  // xmax below xmin
  EXPECT_THROW(ssd::ReadGroundTruths(bad.data(), 3, 2, true, 0, "gt"), Error);
  bad = rows;
  bad[16] = 2;  // image 2 of a batch of 2
  EXPECT_THROW(ssd::ReadGroundTruths(bad.data(), 3, 2, true, 0, "gt"), Error);
  bad = rows;
  bad[1] = 0;  // the background label
  EXPECT_THROW(ssd::ReadGroundTruths(bad.data(), 3, 2, true, 0, "gt"), Error);
}

template <typename TypeParam>
class MultiBoxLossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  MultiBoxLossLayerTest() : top_vec_{&loss_} {}

  LayerParameter Param(int num_classes) const {
    LayerParameter param;
    param.set_name("mbox_loss");
    param.mutable_multibox_loss_param()->set_num_classes(num_classes);
    return param;
  }
  // Priors [1, 2, P * 4] from corners, every variance `variance`.
  void SetPriors(const std::vector<DetectionBox>& boxes, float variance) {
    prior_.Reshape(std::vector<int>{1, 2, static_cast<int>(boxes.size()) * 4});
    Dtype* data = prior_.mutable_cpu_data();
    for (size_t p = 0; p < boxes.size(); ++p) {
      const float corners[4] = {boxes[p].xmin, boxes[p].ymin, boxes[p].xmax, boxes[p].ymax};
      for (int k = 0; k < 4; ++k) {
        data[4 * p + k] = corners[k];
        data[prior_.count(2) + 4 * p + k] = variance;
      }
    }
  }
  void SetTruths(const std::vector<std::vector<float>>& rows) {
    truth_.Reshape(std::vector<int>{1, 1, static_cast<int>(rows.size()), 8});
    for (size_t r = 0; r < rows.size(); ++r) {
      for (int k = 0; k < 8; ++k) truth_.mutable_cpu_data()[8 * r + k] = rows[r][k];
    }
  }
  std::vector<Blob<Dtype>*> Bottom() { return {&loc_, &conf_, &prior_, &truth_}; }

  Blob<Dtype> loc_, conf_, prior_, truth_, loss_;
  std::vector<Blob<Dtype>*> top_vec_;
};
TYPED_TEST_SUITE(MultiBoxLossLayerTest, TestDtypesAndDevices);

// Priors P0 (0, 0, .5, .5), P1 (.5, .5, 1, 1), P2 (0, .5, .5, 1), variance 1,
// CORNER; truths G0 label 1 (0, 0, .4, .5) and G1 label 2 (.5, .6, 1, 1).
// G0 overlaps P0 by .2 / .25 = 0.8, G1 overlaps P1 by 0.8, P2 overlaps none.
// Bipartite: P0-G0 (the first of the two 0.8s), then P1-G1. Mining: P2, the
// one eligible negative (3 per match wanted). Loc predictions 0, targets
// (0, 0, -.1, 0) and (0, .1, 0, 0): smooth L1 0.005 each. Conf scores
// P0 (0, 1, 0) for label 1: log(2 + e) - 1; P1 (0, 0, 0) for label 2: log 3;
// P2 (1, 0, 0) for the background: log(2 + e) - 1. Normalised by the 2
// matches: (0.01 + 2 (log(2 + e) - 1) + log 3) / 2.
TYPED_TEST(MultiBoxLossLayerTest, ThreePriorsTwoBoxesByHand) {
  using Dtype = typename TypeParam::Dtype;
  this->SetPriors({{0, 0, 0.5f, 0.5f}, {0.5f, 0.5f, 1, 1}, {0, 0.5f, 0.5f, 1}}, 1);
  this->SetTruths({{0, 1, 0, 0, 0, 0.4f, 0.5f, 0}, {0, 2, 0, 0.5f, 0.6f, 1, 1, 0}});
  this->loc_.Reshape(std::vector<int>{1, 12});
  this->conf_.Reshape(std::vector<int>{1, 9});
  SetValues(&this->conf_, {0, 1, 0, 0, 0, 0, 1, 0, 0});
  MultiBoxLossLayer<Dtype> layer(this->Param(3));
  layer.SetUp(this->Bottom(), this->top_vec_);
  const double loss = layer.Forward(this->Bottom(), this->top_vec_);
  EXPECT_EQ(layer.matches(), 2);
  EXPECT_EQ(layer.prior_matches()[0].truth, (std::vector<int>{0, 1, -1}));
  EXPECT_EQ(layer.negatives()[0], (std::vector<int>{2}));
  const double expected = (0.01 + 2 * (std::log(2 + std::exp(1.0)) - 1) + std::log(3.0)) / 2;
  EXPECT_NEAR(loss, expected, 1e-5);
  // Without mining every prior counts: the same here, all three are used.
  LayerParameter no_mining = this->Param(3);
  no_mining.mutable_multibox_loss_param()->set_mining_type(MultiBoxLossParameter::NONE);
  MultiBoxLossLayer<Dtype> all(no_mining);
  all.SetUp(this->Bottom(), this->top_vec_);
  EXPECT_NEAR(all.Forward(this->Bottom(), this->top_vec_), expected, 1e-5);
}

// HARD_EXAMPLE on the same three priors: the ranking losses are P1 log 3 +
// 0.005, P0 log(2 + e) - 1 + 0.005, P2 log(2 + e) - 1 (a background with no
// localisation). sample_size 2 keeps P1 and P0: both matches, no negative.
// sample_size 1 keeps P1 alone: P0 loses its match, and the loss is P1's.
TYPED_TEST(MultiBoxLossLayerTest, HardExampleMiningByHand) {
  using Dtype = typename TypeParam::Dtype;
  this->SetPriors({{0, 0, 0.5f, 0.5f}, {0.5f, 0.5f, 1, 1}, {0, 0.5f, 0.5f, 1}}, 1);
  this->SetTruths({{0, 1, 0, 0, 0, 0.4f, 0.5f, 0}, {0, 2, 0, 0.5f, 0.6f, 1, 1, 0}});
  this->loc_.Reshape(std::vector<int>{1, 12});
  this->conf_.Reshape(std::vector<int>{1, 9});
  SetValues(&this->conf_, {0, 1, 0, 0, 0, 0, 1, 0, 0});
  const double hard_negative = std::log(2 + std::exp(1.0)) - 1;
  for (int sample_size : {3, 2, 1}) {
    SCOPED_TRACE(sample_size);
    LayerParameter param = this->Param(3);
    param.mutable_multibox_loss_param()->set_mining_type(MultiBoxLossParameter::HARD_EXAMPLE);
    param.mutable_multibox_loss_param()->set_sample_size(sample_size);
    param.mutable_multibox_loss_param()->mutable_nms_param()->set_nms_threshold(0.5f);
    MultiBoxLossLayer<Dtype> layer(param);
    layer.SetUp(this->Bottom(), this->top_vec_);
    const double loss = layer.Forward(this->Bottom(), this->top_vec_);
    if (sample_size == 1) {
      EXPECT_EQ(layer.prior_matches()[0].truth, (std::vector<int>{-1, 1, -1}));
      EXPECT_TRUE(layer.negatives()[0].empty());
      EXPECT_NEAR(loss, 0.005 + std::log(3.0), 1e-5);
    } else {
      EXPECT_EQ(layer.prior_matches()[0].truth, (std::vector<int>{0, 1, -1}));
      EXPECT_EQ(layer.negatives()[0], sample_size == 3 ? std::vector<int>{2} : std::vector<int>{});
      const double matched = 0.01 + hard_negative + std::log(3.0);
      EXPECT_NEAR(loss, (matched + (sample_size == 3 ? hard_negative : 0)) / 2, 1e-5);
    }
  }
}

// Two images of six priors, three truths (one difficult, one padding row),
// random predictions; the gradient to loc and to conf.
template <typename Dtype>
void FillRandom(Blob<Dtype>* blob, double scale, std::mt19937* rng) {
  std::normal_distribution<double> gaussian(0.0, scale);
  for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = Dtype(gaussian(*rng));
}

TYPED_TEST(MultiBoxLossLayerTest, GradientWithAndWithoutMining) {
  using Dtype = typename TypeParam::Dtype;
  this->SetPriors({{0, 0, 0.5f, 0.5f}, {0.5f, 0, 1, 0.5f}, {0, 0.5f, 0.5f, 1},
                   {0.5f, 0.5f, 1, 1}, {0.2f, 0.2f, 0.8f, 0.8f}, {0.1f, 0.3f, 0.6f, 0.7f}},
                  0.1f);
  this->SetTruths({{0, 1, 0, 0.05f, 0.1f, 0.45f, 0.5f, 0},
                   {0, 2, 1, 0.25f, 0.2f, 0.75f, 0.85f, 0},
                   {-1, -1, -1, -1, -1, -1, -1, -1},
                   {1, 1, 0, 0.5f, 0.55f, 0.95f, 1, 1}});
  this->loc_.Reshape(std::vector<int>{2, 6 * 4});
  this->conf_.Reshape(std::vector<int>{2, 6 * 3});
  std::mt19937 rng(1701);
  FillRandom(&this->loc_, 0.3, &rng);
  FillRandom(&this->conf_, 1.0, &rng);
  for (auto mining : {MultiBoxLossParameter::NONE, MultiBoxLossParameter::MAX_NEGATIVE,
                      MultiBoxLossParameter::HARD_EXAMPLE}) {
    for (auto conf_loss : {MultiBoxLossParameter::SOFTMAX, MultiBoxLossParameter::LOGISTIC}) {
      LayerParameter param = this->Param(3);
      param.mutable_multibox_loss_param()->set_mining_type(mining);
      param.mutable_multibox_loss_param()->set_conf_loss_type(conf_loss);
      param.mutable_multibox_loss_param()->set_code_type(PriorBoxParameter::CENTER_SIZE);
      // Every eligible negative (every prior, for HARD_EXAMPLE) is taken: a
      // small step cannot change the set.
      param.mutable_multibox_loss_param()->set_neg_pos_ratio(100);
      param.mutable_multibox_loss_param()->set_sample_size(100);
      MultiBoxLossLayer<Dtype> layer(param);
      GradientChecker<Dtype> checker(1e-3, 2e-3);
      checker.CheckGradient(&layer, this->Bottom(), this->top_vec_, 0);
      checker.CheckGradient(&layer, this->Bottom(), this->top_vec_, 1);
    }
  }
}

TYPED_TEST(MultiBoxLossLayerTest, RefusedSettingsAreNamed) {
  using Dtype = typename TypeParam::Dtype;
  this->SetPriors({{0, 0, 0.5f, 0.5f}}, 1);
  this->SetTruths({{0, 1, 0, 0, 0, 0.4f, 0.5f, 0}});
  this->loc_.Reshape(std::vector<int>{1, 4});
  this->conf_.Reshape(std::vector<int>{1, 3});
  LayerParameter hard = this->Param(3);
  hard.mutable_multibox_loss_param()->set_mining_type(MultiBoxLossParameter::HARD_EXAMPLE);
  hard.mutable_multibox_loss_param()->set_sample_size(0);
  MultiBoxLossLayer<Dtype> hard_layer(hard);
  ExpectSetUpError<Dtype>(&hard_layer, this->Bottom(), this->top_vec_,
                          "sample_size is 0; HARD_EXAMPLE needs a positive one");
  MultiBoxLossLayer<Dtype> no_classes(this->Param(0));
  ExpectSetUpError<Dtype>(&no_classes, this->Bottom(), this->top_vec_, "num_classes");
  this->conf_.Reshape(std::vector<int>{1, 4});
  MultiBoxLossLayer<Dtype> wrong_conf(this->Param(3));
  ExpectSetUpError<Dtype>(&wrong_conf, this->Bottom(), this->top_vec_,
                          "bottom 1 (conf) holds 4 values per image");
}

}  // namespace
}  // namespace crema
