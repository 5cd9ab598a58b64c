// Log: forward values by hand for the natural log and base 2 with scale and
// shift, gradients against finite differences on positive inputs, in place,
// refusal of bad bases, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/log_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class LogLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  LogLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillerParameter filler_param;
    filler_param.set_type("uniform");
    filler_param.set_min(0.5);
    filler_param.set_max(2);
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(LogLayerTest, TestDtypesAndDevices);

TYPED_TEST(LogLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  LogLayer<Dtype> natural(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(
      &natural, {0.36787944117144233, 1, 2.718281828459045, 7.38905609893065});
  const std::vector<double> expected = {-1, 0, 1, 2};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(top[i], expected[i], 1e-5) << i;

  // log2(1 + 0.5 x)
  param.mutable_log_param()->set_base(2);
  param.mutable_log_param()->set_scale(0.5);
  param.mutable_log_param()->set_shift(1);
  LogLayer<Dtype> base_two(param);
  const std::vector<Dtype> top_two = ForwardOnValues<Dtype>(&base_two, {0, 2, 6, 14});
  const std::vector<double> expected_two = {0, 1, 2, 3};
  for (size_t i = 0; i < expected_two.size(); ++i)
    EXPECT_NEAR(top_two[i], expected_two[i], 1e-5) << i;
}

TYPED_TEST(LogLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  LogLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(LogLayerTest, GradientBaseScaleShift) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_log_param()->set_base(10);
  param.mutable_log_param()->set_scale(-0.5);
  param.mutable_log_param()->set_shift(3);
  LogLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(LogLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Log");
  param.mutable_log_param()->set_base(2);
  param.mutable_log_param()->set_scale(0.8);
  param.mutable_log_param()->set_shift(1);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
}

TYPED_TEST(LogLayerTest, BadBaseRefused) {
  using Dtype = typename TypeParam::Dtype;
  for (const float base : {0.f, -2.f, 1.f}) {
    LayerParameter param;
    param.set_name("log1");
    param.mutable_log_param()->set_base(base);
    LogLayer<Dtype> layer(param);
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(LogLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Log");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Log");
}

}  // namespace
}  // namespace crema
