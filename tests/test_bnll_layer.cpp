// BNLL: forward values by hand (no overflow for large inputs), backward by hand
// (including saturated inputs), gradients against finite differences, in place,
// on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/bnll_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class BNLLLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  BNLLLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(BNLLLayerTest, TestDtypesAndDevices);

TYPED_TEST(BNLLLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  BNLLLayer<Dtype> layer(param);
  const std::vector<Dtype> top =
      ForwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3, 100, 1000, -1000});
  const std::vector<double> expected = {0.1269280110429725,
                                        0.4740769841801067,
                                        0.6931471805599453,
                                        0.9740769841801067,
                                        3.048587351573742,
                                        100,
                                        1000,
                                        0};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(top[i], expected[i], 1e-6 * std::max(1.0, expected[i])) << i;
  }
}

TYPED_TEST(BNLLLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  BNLLLayer<Dtype> layer(param);
  // dy/dx = sigmoid(x).
  const std::vector<Dtype> bottom_diff =
      BackwardOnValues<Dtype>(&layer, {-50, -2, 0, 2, 50, 1000}, {1, 1, 1, 1, 1, 3});
  const std::vector<double> expected = {
      1.928749847963918e-22, 0.11920292202211755, 0.5, 0.8807970779778823, 1, 3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(bottom_diff[i], expected[i], 1e-6) << i;
}

TYPED_TEST(BNLLLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  BNLLLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(BNLLLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("BNLL");
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
}

TYPED_TEST(BNLLLayerTest, WrongBlobCountNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("bnll3");
  BNLLLayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> two_bottoms{this->bottom_.get(), this->bottom_.get()};
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, two_bottoms, this->top_vec_);
}

TYPED_TEST(BNLLLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("BNLL");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "BNLL");
}

}  // namespace
}  // namespace crema
