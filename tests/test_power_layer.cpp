// Power: forward values by hand (including the constant cases power 0 and
// scale 0), gradients against finite differences for several powers, a finite
// derivative at a zero base, in place, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/power_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class PowerLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  PowerLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(PowerLayerTest, TestDtypesAndDevices);

TYPED_TEST(PowerLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  // (1 + 0.5 x)^2
  param.mutable_power_param()->set_power(2);
  param.mutable_power_param()->set_scale(0.5);
  param.mutable_power_param()->set_shift(1);
  PowerLayer<Dtype> square(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&square, {-2, -0.5, 0, 0.5, 3});
  const std::vector<double> expected = {0, 0.5625, 1, 1.5625, 6.25};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(top[i], expected[i], 1e-6) << i;

  LayerParameter root_param;
  root_param.mutable_power_param()->set_power(0.5);
  PowerLayer<Dtype> root(root_param);
  const std::vector<Dtype> top_root = ForwardOnValues<Dtype>(&root, {0.25, 1, 4});
  const std::vector<double> expected_root = {0.5, 1, 2};
  for (size_t i = 0; i < expected_root.size(); ++i)
    EXPECT_NEAR(top_root[i], expected_root[i], 1e-6) << i;

  LayerParameter identity_param;
  PowerLayer<Dtype> identity(identity_param);
  const std::vector<Dtype> top_identity = ForwardOnValues<Dtype>(&identity, {-1.5, 0, 2});
  EXPECT_EQ(top_identity, (std::vector<Dtype>{-1.5, 0, 2}));
}

TYPED_TEST(PowerLayerTest, ConstantCasesByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_power_param()->set_power(0);
  param.mutable_power_param()->set_shift(-3);
  PowerLayer<Dtype> power_zero(param);
  EXPECT_EQ(ForwardOnValues<Dtype>(&power_zero, {-2, 0, 5}), (std::vector<Dtype>{1, 1, 1}));

  // scale 0: shift^power whatever x is.
  param.mutable_power_param()->set_power(3);
  param.mutable_power_param()->set_scale(0);
  param.mutable_power_param()->set_shift(2);
  PowerLayer<Dtype> scale_zero(param);
  EXPECT_EQ(ForwardOnValues<Dtype>(&scale_zero, {-2, 0, 5}), (std::vector<Dtype>{8, 8, 8}));
  PowerLayer<Dtype> scale_zero_backward(param);
  EXPECT_EQ(BackwardOnValues<Dtype>(&scale_zero_backward, {-2, 0, 5}, {1, 1, 1}),
            (std::vector<Dtype>{0, 0, 0}));
}

TYPED_TEST(PowerLayerTest, DerivativeAtZeroBaseIsFinite) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_power_param()->set_power(3);
  param.mutable_power_param()->set_shift(-1);
  PowerLayer<Dtype> layer(param);
  // dy/dx = 3 (x - 1)^2: 0 at x = 1, where y / (x - 1) would be 0 / 0.
  const std::vector<Dtype> bottom_diff = BackwardOnValues<Dtype>(&layer, {1, 3, -1}, {1, 1, 2});
  const std::vector<double> expected = {0, 12, 24};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(bottom_diff[i], expected[i], 1e-5) << i;
}

// (shift + scale * x)^power, with inputs uniform in [min, max].
template <typename Dtype>
void CheckPowerGradient(float power, float scale, float shift, float min, float max) {
  Context::set_random_seed(1701);
  Blob<Dtype> bottom(2, 3, 4, 5), top;
  FillerParameter filler_param;
  filler_param.set_type("uniform");
  filler_param.set_min(min);
  filler_param.set_max(max);
  GetFiller<Dtype>(filler_param)->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param;
  param.mutable_power_param()->set_power(power);
  param.mutable_power_param()->set_scale(scale);
  param.mutable_power_param()->set_shift(shift);
  PowerLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, bottom_vec, top_vec);
}

TYPED_TEST(PowerLayerTest, GradientFractionalPower) {
  // The base 2.4 + 0.83 x stays in [0.74, 4.06].
  CheckPowerGradient<typename TypeParam::Dtype>(0.37, 0.83, 2.4, -2, 2);
}

TYPED_TEST(PowerLayerTest, GradientNegativePower) {
  CheckPowerGradient<typename TypeParam::Dtype>(-1.5, 0.83, 2.4, -2, 2);
}

TYPED_TEST(PowerLayerTest, GradientSquare) {
  CheckPowerGradient<typename TypeParam::Dtype>(2, 0.83, -0.4, -2, 2);
}

TYPED_TEST(PowerLayerTest, GradientLinear) {
  CheckPowerGradient<typename TypeParam::Dtype>(1, 0.83, -2.4, -2, 2);
}

TYPED_TEST(PowerLayerTest, GradientPowerZero) {
  CheckPowerGradient<typename TypeParam::Dtype>(0, 0.83, -2.4, -2, 2);
}

TYPED_TEST(PowerLayerTest, GradientScaleZero) {
  CheckPowerGradient<typename TypeParam::Dtype>(2, 0, 1.5, -2, 2);
}

TYPED_TEST(PowerLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Power");
  param.mutable_power_param()->set_power(3);
  param.mutable_power_param()->set_scale(0.7);
  param.mutable_power_param()->set_shift(0.2);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
  param.mutable_power_param()->set_power(1);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
}

TYPED_TEST(PowerLayerTest, WrongBlobCountNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("power3");
  PowerLayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> two_bottoms{this->bottom_.get(), this->bottom_.get()};
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, two_bottoms, this->top_vec_);
}

TYPED_TEST(PowerLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Power");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Power");
}

}  // namespace
}  // namespace crema
