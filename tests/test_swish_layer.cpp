// Swish: forward values by hand for two betas, gradients against finite
// differences, in place, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/swish_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class SwishLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  SwishLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(SwishLayerTest, TestDtypesAndDevices);

TYPED_TEST(SwishLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  SwishLayer<Dtype> layer(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3, -1000});
  const std::vector<double> expected = {-0.2384058440442351, -0.1887703343990727, 0,
                                        0.3112296656009273,  2.8577223804673,     0};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(top[i], expected[i], 1e-6) << i;

  param.mutable_swish_param()->set_beta(2);
  SwishLayer<Dtype> steep(param);
  const std::vector<Dtype> top_steep = ForwardOnValues<Dtype>(&steep, {-1, 1});
  EXPECT_NEAR(top_steep[0], -0.11920292202211755, 1e-6);
  EXPECT_NEAR(top_steep[1], 0.8807970779778823, 1e-6);
}

TYPED_TEST(SwishLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  SwishLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(SwishLayerTest, GradientOtherBeta) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_swish_param()->set_beta(1.5);
  SwishLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(SwishLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Swish");
  param.mutable_swish_param()->set_beta(0.8);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
}

TYPED_TEST(SwishLayerTest, WrongBlobCountNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("swish3");
  SwishLayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> two_bottoms{this->bottom_.get(), this->bottom_.get()};
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, two_bottoms, this->top_vec_);
}

TYPED_TEST(SwishLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Swish");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Swish");
}

}  // namespace
}  // namespace crema
