// ELU: forward values by hand for the default and another alpha, gradients
// against finite differences (skipping the kink at 0), in place, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/elu_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ELULayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ELULayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(ELULayerTest, TestDtypesAndDevices);

TYPED_TEST(ELULayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  const std::vector<Dtype> input = {-2, -0.5, 0, 0.5, 3};
  LayerParameter param;
  ELULayer<Dtype> layer(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, input);
  const std::vector<double> expected = {-0.8646647167633873, -0.3934693402873666, 0, 0.5, 3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(top[i], expected[i], 1e-6) << i;

  param.mutable_elu_param()->set_alpha(0.5);
  ELULayer<Dtype> half(param);
  const std::vector<Dtype> top_half = ForwardOnValues<Dtype>(&half, input);
  const std::vector<double> expected_half = {-0.43233235838169365, -0.1967346701436833, 0, 0.5, 3};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(top_half[i], expected_half[i], 1e-6) << i;
}

TYPED_TEST(ELULayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_elu_param()->set_alpha(0.5);
  ELULayer<Dtype> layer(param);
  // dy/dx is 1 for x > 0 and alpha * e^x otherwise.
  const std::vector<Dtype> bottom_diff =
      BackwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3}, {1, 1, 1, 1, 2});
  const std::vector<double> expected = {0.06766764161830635, 0.3032653298563167, 0.5, 1, 2};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(bottom_diff[i], expected[i], 1e-6) << i;
}

TYPED_TEST(ELULayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  ELULayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ELULayerTest, GradientOtherAlpha) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_elu_param()->set_alpha(0.5);
  ELULayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ELULayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("ELU");
  param.mutable_elu_param()->set_alpha(0.7);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
}

TYPED_TEST(ELULayerTest, WrongBlobCountNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("elu3");
  ELULayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> two_bottoms{this->bottom_.get(), this->bottom_.get()};
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, two_bottoms, this->top_vec_);
}

TYPED_TEST(ELULayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("ELU");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "ELU");
}

}  // namespace
}  // namespace crema
