// Exp: forward values by hand for base e and base 2 with scale and shift,
// gradients against finite differences, in place, refusal of bad bases, on
// every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/exp_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ExpLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ExpLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(ExpLayerTest, TestDtypesAndDevices);

TYPED_TEST(ExpLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  ExpLayer<Dtype> natural(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&natural, {-1, 0, 1, 2});
  const std::vector<double> expected = {0.36787944117144233, 1, 2.718281828459045,
                                        7.38905609893065};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(top[i], expected[i], 1e-5) << i;

  // 2^(1 + 0.5 x)
  param.mutable_exp_param()->set_base(2);
  param.mutable_exp_param()->set_scale(0.5);
  param.mutable_exp_param()->set_shift(1);
  ExpLayer<Dtype> base_two(param);
  const std::vector<Dtype> top_two = ForwardOnValues<Dtype>(&base_two, {-2, 0, 2, 4});
  const std::vector<double> expected_two = {1, 2, 4, 8};
  for (size_t i = 0; i < expected_two.size(); ++i)
    EXPECT_NEAR(top_two[i], expected_two[i], 1e-5) << i;
}

TYPED_TEST(ExpLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  ExpLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ExpLayerTest, GradientBaseScaleShift) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_exp_param()->set_base(2);
  param.mutable_exp_param()->set_scale(-0.7);
  param.mutable_exp_param()->set_shift(0.4);
  ExpLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ExpLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Exp");
  param.mutable_exp_param()->set_base(3);
  param.mutable_exp_param()->set_scale(0.5);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
}

TYPED_TEST(ExpLayerTest, NonPositiveBaseRefused) {
  using Dtype = typename TypeParam::Dtype;
  for (const float base : {0.f, -2.f, -0.5f}) {
    LayerParameter param;
    param.set_name("exp1");
    param.mutable_exp_param()->set_base(base);
    ExpLayer<Dtype> layer(param);
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(ExpLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Exp");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Exp");
}

}  // namespace
}  // namespace crema
