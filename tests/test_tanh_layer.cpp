// TanH: forward values by hand (saturating without NaN), gradients against
// finite differences, in place, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/tanh_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class TanHLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  TanHLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(TanHLayerTest, TestDtypesAndDevices);

TYPED_TEST(TanHLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  TanHLayer<Dtype> layer(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3, -100, 100});
  const std::vector<double> expected = {
      -0.9640275800758169, -0.46211715726000974, 0, 0.46211715726000974, 0.9950547536867305, -1, 1};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(top[i], expected[i], 1e-6) << i;
}

TYPED_TEST(TanHLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  TanHLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(TanHLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("TanH");
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
}

TYPED_TEST(TanHLayerTest, WrongBlobCountNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("tanh3");
  TanHLayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> two_bottoms{this->bottom_.get(), this->bottom_.get()};
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, two_bottoms, this->top_vec_);
}

TYPED_TEST(TanHLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("TanH");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "TanH");
}

}  // namespace
}  // namespace crema
