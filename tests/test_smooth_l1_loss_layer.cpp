// SmoothL1Loss: the loss by hand on both sides of the knee (sigma 1 and
// sigma 2), with SSD's one weights blob and py-faster-rcnn's inside and
// outside weights; R-FCN's normalizations (PRE_FIXED among them) and its
// per-item loss top; gradients to prediction and target; bad settings named.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "crema/layers/smooth_l1_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class SmoothL1LossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  SmoothL1LossLayerTest()
      : a_(std::vector<int>{2, 3}),
        b_(std::vector<int>{2, 3}),
        inside_(std::vector<int>{2, 3}),
        outside_(std::vector<int>{2, 3}),
        top_vec_{&loss_} {
    SetValues(&a_, {0.5, -2, 3, 0, 1.25, -0.25});
    SetValues(&b_, {0, 0, 1, 0, 0, 0});  // x = 0.5, -2, 2, 0, 1.25, -0.25
    SetValues(&inside_, {1, 1, 0.25, 1, 2, 1});
    SetValues(&outside_, {1, 0.5, 1, 1, 1, 3});
  }
  Dtype LossOf(const LayerParameter& param, const std::vector<Blob<Dtype>*>& bottom) {
    SmoothL1LossLayer<Dtype> layer(param);
    layer.SetUp(bottom, top_vec_);
    return layer.Forward(bottom, top_vec_);
  }
  void Randomize(std::vector<Blob<Dtype>*> blobs, double scale) {
    std::mt19937 rng(1701);
    std::normal_distribution<double> gaussian(0.0, scale);
    for (Blob<Dtype>* blob : blobs) {
      for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = Dtype(gaussian(rng));
    }
  }
  Blob<Dtype> a_, b_, inside_, outside_, loss_;
  std::vector<Blob<Dtype>*> top_vec_;
};
TYPED_TEST_SUITE(SmoothL1LossLayerTest, TestDtypesAndDevices);

// f(x) = x^2 / 2 for |x| < 1, |x| - 1/2 beyond: 0.125 + 1.5 + 1.5 + 0 + 0.75
// + 0.03125 = 3.90625, over N = 2 items.
TYPED_TEST(SmoothL1LossLayerTest, ForwardByHandWithoutWeights) {
  EXPECT_NEAR(this->LossOf(LayerParameter(), {&this->a_, &this->b_}), 3.90625 / 2, 1e-6);
}

// sigma 2: the knee at 1/4; f(x) = 2 x^2 inside, |x| - 1/8 beyond:
// 0.375 + 1.875 + 1.875 + 0 + 1.125 + 0.125 = 5.375.
TYPED_TEST(SmoothL1LossLayerTest, SigmaMovesTheKnee) {
  LayerParameter param;
  param.mutable_smooth_l1_loss_param()->set_sigma(2);
  EXPECT_NEAR(this->LossOf(param, {&this->a_, &this->b_}), 5.375 / 2, 1e-6);
}

// SSD's weights multiply x: x = 0.5, -2, 0.5, 0, 2.5, -0.25:
// 0.125 + 1.5 + 0.125 + 0 + 2 + 0.03125 = 3.78125.
TYPED_TEST(SmoothL1LossLayerTest, OneWeightsBlobScalesTheDifference) {
  EXPECT_NEAR(this->LossOf(LayerParameter(), {&this->a_, &this->b_, &this->inside_}), 3.78125 / 2,
              1e-6);
}

// Outside weights scale each term: 0.125 + 0.75 + 0.125 + 0 + 2 + 0.09375.
TYPED_TEST(SmoothL1LossLayerTest, InsideAndOutsideWeights) {
  EXPECT_NEAR(
      this->LossOf(LayerParameter(), {&this->a_, &this->b_, &this->inside_, &this->outside_}),
      3.09375 / 2, 1e-6);
}

TYPED_TEST(SmoothL1LossLayerTest, GradientToPredictionAndTarget) {
  using Dtype = typename TypeParam::Dtype;
  this->Randomize({&this->a_, &this->b_}, 1.5);
  SmoothL1LossLayer<Dtype> layer{LayerParameter()};
  GradientChecker<Dtype> checker(1e-3, 1e-3);
  const std::vector<Blob<Dtype>*> bottom{&this->a_, &this->b_};
  checker.CheckGradient(&layer, bottom, this->top_vec_);
}

TYPED_TEST(SmoothL1LossLayerTest, GradientWithWeightsAndSigma) {
  using Dtype = typename TypeParam::Dtype;
  this->Randomize({&this->a_, &this->b_}, 1.5);
  LayerParameter param;
  param.mutable_smooth_l1_loss_param()->set_sigma(1.5);
  param.add_loss_weight(0.7);
  SmoothL1LossLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-3, 1e-3);
  const std::vector<Blob<Dtype>*> bottom{&this->a_, &this->b_, &this->inside_, &this->outside_};
  checker.CheckGradient(&layer, bottom, this->top_vec_, 0);
  checker.CheckGradient(&layer, bottom, this->top_vec_, 1);
}

TYPED_TEST(SmoothL1LossLayerTest, BadSettingsNameTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("loc_loss");
  param.mutable_smooth_l1_loss_param()->set_sigma(0);
  SmoothL1LossLayer<Dtype> zero_sigma(param);
  ExpectSetUpError<Dtype>(&zero_sigma, {&this->a_, &this->b_}, this->top_vec_,
                          "smooth_l1_loss_param.sigma is 0");
  param.clear_smooth_l1_loss_param();
  Blob<Dtype> short_weights(std::vector<int>{2, 2});
  SmoothL1LossLayer<Dtype> mismatched(param);
  ExpectSetUpError<Dtype>(&mismatched, {&this->a_, &this->b_, &short_weights}, this->top_vec_,
                          "bottom 2 has shape 2 2");
}

// R-FCN's loss_param.normalization, where the file names one: the summed
// 3.90625 over pre_fixed_normalizer, over the items times the positions
// (FULL, VALID: 2 x 1 here), over 1 (NONE).
TYPED_TEST(SmoothL1LossLayerTest, RfcnNormalizations) {
  LayerParameter param;
  param.mutable_loss_param()->set_normalization(LossParameter::PRE_FIXED);
  param.mutable_loss_param()->set_pre_fixed_normalizer(128);
  EXPECT_NEAR(this->LossOf(param, {&this->a_, &this->b_}), 3.90625 / 128, 1e-7);
  param.mutable_loss_param()->set_normalization(LossParameter::NONE);
  EXPECT_NEAR(this->LossOf(param, {&this->a_, &this->b_}), 3.90625, 1e-6);
  param.mutable_loss_param()->set_normalization(LossParameter::VALID);
  EXPECT_NEAR(this->LossOf(param, {&this->a_, &this->b_}), 3.90625 / 2, 1e-6);
  // Below 1, the fork divides by 1.
  param.mutable_loss_param()->set_normalization(LossParameter::PRE_FIXED);
  param.mutable_loss_param()->set_pre_fixed_normalizer(0.5);
  EXPECT_NEAR(this->LossOf(param, {&this->a_, &this->b_}), 3.90625, 1e-6);
}

// On [2, 3, 2] blobs VALID divides by the items times the positions (4),
// BATCH_SIZE by the items (2); the second top sums each item's position
// over axis 1, unnormalized.
TYPED_TEST(SmoothL1LossLayerTest, PerItemLossesAndSpatialNormalizer) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(std::vector<int>{2, 3, 2}), b(std::vector<int>{2, 3, 2});
  // x per (item, channel, position): item 0 {0.5, 2 | -2, 0 | 0, 0.25},
  // item 1 {1, 1 | 3, -0.5 | 0, 0}.
  SetValues(&a, {0.5, 2, -2, 0, 0, 0.25, 1, 1, 3, -0.5, 0, 0});
  SetValues(&b, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  Blob<Dtype> items;
  std::vector<Blob<Dtype>*> top{&this->loss_, &items};
  LayerParameter param;
  param.set_type("SmoothL1LossOHEM");
  param.mutable_loss_param()->set_normalization(LossParameter::VALID);
  auto layer = LayerRegistry<Dtype>::CreateLayer(param);
  layer->SetUp({&a, &b}, top);
  const Dtype loss = layer->Forward({&a, &b}, top);
  // f: item 0: position 0: 0.125 + 1.5 + 0, position 1: 1.5 + 0 + 0.03125;
  // item 1: position 0: 0.5 + 2.5 + 0, position 1: 0.5 + 0.125 + 0.
  EXPECT_NEAR(loss, (1.625 + 1.53125 + 3 + 0.625) / 4, 1e-6);
  EXPECT_EQ(items.shape(), (std::vector<int>{2, 1, 2}));
  const std::vector<double> expected{1.625, 1.53125, 3, 0.625};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(items.cpu_data()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(SmoothL1LossLayerTest, GradientWithPreFixedNormalizer) {
  using Dtype = typename TypeParam::Dtype;
  this->Randomize({&this->a_, &this->b_}, 1.5);
  LayerParameter param;
  param.mutable_loss_param()->set_normalization(LossParameter::PRE_FIXED);
  param.mutable_loss_param()->set_pre_fixed_normalizer(3);
  SmoothL1LossLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-3, 1e-3);
  const std::vector<Blob<Dtype>*> bottom{&this->a_, &this->b_, &this->inside_};
  checker.CheckGradient(&layer, bottom, this->top_vec_, 0);
  checker.CheckGradient(&layer, bottom, this->top_vec_, 1);
}

TYPED_TEST(SmoothL1LossLayerTest, RfcnSettingsOutOfRangeNameTheField) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("loss_bbox");
  param.mutable_loss_param()->set_normalization(LossParameter::PRE_FIXED);
  param.mutable_loss_param()->set_pre_fixed_normalizer(0);
  SmoothL1LossLayer<Dtype> zero(param);
  ExpectSetUpError<Dtype>(&zero, {&this->a_, &this->b_}, this->top_vec_,
                          "pre_fixed_normalizer is 0");
  param.clear_loss_param();
  param.add_loss_weight(1);
  param.add_loss_weight(1);
  Blob<Dtype> items;
  SmoothL1LossLayer<Dtype> weighted_items(param);
  ExpectSetUpError<Dtype>(&weighted_items, {&this->a_, &this->b_}, {&this->loss_, &items},
                          "its loss_weight must be 0");
  LayerParameter one;
  one.add_loss_weight(1);
  SmoothL1LossLayer<Dtype> short_weights(one);
  ExpectSetUpError<Dtype>(&short_weights, {&this->a_, &this->b_}, {&this->loss_, &items},
                          "has 1 loss_weight values for 2");
}

TYPED_TEST(SmoothL1LossLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("SmoothL1Loss");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "SmoothL1Loss");
  param.set_type("SmoothL1LossOHEM");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "SmoothL1LossOHEM");
}

}  // namespace
}  // namespace crema
