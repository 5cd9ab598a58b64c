// MVN: forward values by hand per channel, across channels and mean-only,
// eps added to the standard deviation, gradients against finite differences
// for the three configurations, in-place backward against out-of-place, a
// finite gradient for a constant row, and configuration errors.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/mvn_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class MVNLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  MVNLayerTest()
      : bottom_(new Blob<Dtype>(2, 3, 3, 2)),
        small_(new Blob<Dtype>(std::vector<int>{1, 2, 4})),
        top_(new Blob<Dtype>()) {
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    // Channel 0: mean 3, variance 3.5; channel 1: mean 2, variance 4; the
    // whole image: mean 2.5, variance 4.
    const Dtype values[] = {1, 2, 3, 6, 0, 0, 4, 4};
    std::copy(values, values + 8, small_->mutable_cpu_data());
    bottom_vec_.push_back(bottom_.get());
    small_vec_.push_back(small_.get());
    top_vec_.push_back(top_.get());
  }

  // Runs MVN with mvn on small_ and expects expected.
  void ExpectSmallForward(const MVNParameter& mvn, const std::vector<double>& expected) {
    LayerParameter param;
    *param.mutable_mvn_param() = mvn;
    MVNLayer<Dtype> layer(param);
    layer.SetUp(this->small_vec_, this->top_vec_);
    layer.Forward(this->small_vec_, this->top_vec_);
    ASSERT_EQ(this->top_->shape(), this->small_->shape());
    for (int i = 0; i < 8; ++i) {
      EXPECT_NEAR(this->top_->cpu_data()[i], expected[i], 1e-5) << mvn.DebugString() << i;
    }
  }

  void CheckGradient(const MVNParameter& mvn) {
    LayerParameter param;
    *param.mutable_mvn_param() = mvn;
    MVNLayer<Dtype> layer(param);
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
  }

  std::unique_ptr<Blob<Dtype>> bottom_, small_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, small_vec_, top_vec_;
};
TYPED_TEST_SUITE(MVNLayerTest, TestDtypesAndDevices);

TYPED_TEST(MVNLayerTest, ForwardPerChannelByHand) {
  const double std0 = std::sqrt(3.5);
  this->ExpectSmallForward(MVNParameter(), {-2 / std0, -1 / std0, 0, 3 / std0, -1, -1, 1, 1});
}

TYPED_TEST(MVNLayerTest, ForwardAcrossChannelsByHand) {
  MVNParameter mvn;
  mvn.set_across_channels(true);
  this->ExpectSmallForward(mvn, {-0.75, -0.25, 0.25, 1.75, -1.25, -1.25, 0.75, 0.75});
}

TYPED_TEST(MVNLayerTest, ForwardMeanOnlyByHand) {
  MVNParameter mvn;
  mvn.set_normalize_variance(false);
  this->ExpectSmallForward(mvn, {-2, -1, 0, 3, -2, -2, 2, 2});
  mvn.set_across_channels(true);
  this->ExpectSmallForward(mvn, {-1.5, -0.5, 0.5, 3.5, -2.5, -2.5, 1.5, 1.5});
}

// Caffe's formula: eps joins the standard deviation (2 + 1 = 3), not the
// variance (which would give sqrt(4 + 1)).
TYPED_TEST(MVNLayerTest, EpsIsAddedToTheStandardDeviation) {
  MVNParameter mvn;
  mvn.set_eps(1);
  const double std0 = std::sqrt(3.5) + 1;
  this->ExpectSmallForward(mvn,
                           {-2 / std0, -1 / std0, 0, 3 / std0, -2. / 3, -2. / 3, 2. / 3, 2. / 3});
}

TYPED_TEST(MVNLayerTest, GradientPerChannel) { this->CheckGradient(MVNParameter()); }

TYPED_TEST(MVNLayerTest, GradientAcrossChannels) {
  MVNParameter mvn;
  mvn.set_across_channels(true);
  this->CheckGradient(mvn);
}

TYPED_TEST(MVNLayerTest, GradientMeanOnly) {
  MVNParameter mvn;
  mvn.set_normalize_variance(false);
  this->CheckGradient(mvn);
}

// A large eps makes the exact derivative and the usual approximation (which
// drops the factor (std + eps) / std) differ clearly.
TYPED_TEST(MVNLayerTest, GradientLargeEps) {
  MVNParameter mvn;
  mvn.set_eps(0.5);
  this->CheckGradient(mvn);
}

TYPED_TEST(MVNLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  Blob<Dtype> top_diff(this->bottom_->shape());
  GetFiller<Dtype>(filler_param)->Fill(&top_diff);
  for (const bool normalize_variance : {true, false}) {
    LayerParameter param;
    param.mutable_mvn_param()->set_normalize_variance(normalize_variance);
    MVNLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    cpu_copy(top_diff.count(), top_diff.cpu_data(), this->top_->mutable_cpu_diff());
    layer.Backward(this->top_vec_, {true}, this->bottom_vec_);

    Blob<Dtype> in_place;
    in_place.CopyFrom(*this->bottom_, false, true);
    std::vector<Blob<Dtype>*> in_place_vec{&in_place};
    layer.Forward(in_place_vec, in_place_vec);
    for (int i = 0; i < in_place.count(); ++i) {
      EXPECT_NEAR(in_place.cpu_data()[i], this->top_->cpu_data()[i], 1e-5) << i;
    }
    cpu_copy(top_diff.count(), top_diff.cpu_data(), in_place.mutable_cpu_diff());
    layer.Backward(in_place_vec, {true}, in_place_vec);
    for (int i = 0; i < in_place.count(); ++i) {
      EXPECT_NEAR(in_place.cpu_diff()[i], this->bottom_->cpu_diff()[i], 1e-4) << i;
    }
  }
}

// A constant row has zero deviation: its output is 0 and its gradient is
// (dy - mean(dy)) / eps, finite, not NaN.
TYPED_TEST(MVNLayerTest, ConstantRowHasFiniteGradient) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1, 1, 4});
  cpu_set(4, Dtype(3), bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  LayerParameter param;
  param.mutable_mvn_param()->set_eps(0.5);
  MVNLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, this->top_vec_);
  layer.Forward(bottom_vec, this->top_vec_);
  const Dtype top_diff[] = {1, 2, 3, 6};
  std::copy(top_diff, top_diff + 4, this->top_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, bottom_vec);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(this->top_->cpu_data()[i], Dtype(0)) << i;
    EXPECT_NEAR(bottom.cpu_diff()[i], (top_diff[i] - 3) / 0.5, 1e-5) << i;
  }
}

TYPED_TEST(MVNLayerTest, BadConfigurationThrows) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("mvn4");
  param.mutable_mvn_param()->set_eps(-1);
  MVNLayer<Dtype> negative_eps(param);
  try {
    negative_eps.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "a negative eps must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mvn4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(MVN)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("eps"), std::string::npos) << e.what();
  }
  param.clear_mvn_param();
  MVNLayer<Dtype> two_bottoms(param);
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), this->small_.get()};
  try {
    two_bottoms.SetUp(bottom_vec, this->top_vec_);
    FAIL() << "two bottoms must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mvn4"), std::string::npos) << e.what();
  }
}

TYPED_TEST(MVNLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("MVN");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "MVN");
}

}  // namespace
}  // namespace crema
