// AbsVal: forward and backward values by hand, gradients against finite
// differences (skipping the kink at 0), refusal of in-place use, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/absval_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class AbsValLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  AbsValLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(AbsValLayerTest, TestDtypesAndDevices);

TYPED_TEST(AbsValLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  AbsValLayer<Dtype> layer(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3});
  const std::vector<Dtype> expected = {2, 0.5, 0, 0.5, 3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(top[i], expected[i]) << i;
}

TYPED_TEST(AbsValLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  AbsValLayer<Dtype> layer(param);
  const std::vector<Dtype> bottom_diff =
      BackwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3}, {1, 2, 3, 4, 5});
  const std::vector<Dtype> expected = {-1, -2, 0, 4, 5};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(bottom_diff[i], expected[i]) << i;
}

TYPED_TEST(AbsValLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  AbsValLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(AbsValLayerTest, InPlaceRefusedNamingTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("abs1");
  AbsValLayer<Dtype> layer(param);
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->bottom_vec_);
}

TYPED_TEST(AbsValLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("AbsVal");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "AbsVal");
}

}  // namespace
}  // namespace crema
