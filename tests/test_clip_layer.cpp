// Clip: forward and backward values by hand (the gradient passes at the bounds
// too), gradients against finite differences away from both kinks, in place,
// refusal of bad bounds, on every device.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/clip_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ClipLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ClipLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(ClipLayerTest, TestDtypesAndDevices);

// A Clip layer's parameters with both bounds given.
LayerParameter ClipParam(float min, float max) {
  LayerParameter param;
  param.set_name("clip1");
  param.set_type("Clip");
  param.mutable_clip_param()->set_min(min);
  param.mutable_clip_param()->set_max(max);
  return param;
}

// Moves values that lie within margin of a kink to margin past it, so the
// finite differences never straddle one.
template <typename Dtype>
void MoveAwayFromKinks(Blob<Dtype>* blob, Dtype min, Dtype max, Dtype margin) {
  Dtype* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) {
    for (const Dtype kink : {min, max}) {
      if (std::fabs(data[i] - kink) < margin)
        data[i] = data[i] < kink ? kink - margin : kink + margin;
    }
  }
}

TYPED_TEST(ClipLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ClipParam(-1, 2));
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, {-3, -1, 0.5, 2, 5});
  EXPECT_EQ(top, (std::vector<Dtype>{-1, -1, 0.5, 2, 2}));
}

TYPED_TEST(ClipLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ClipParam(-1, 2));
  const std::vector<Dtype> bottom_diff =
      BackwardOnValues<Dtype>(&layer, {-3, -1, 0.5, 2, 5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(bottom_diff, (std::vector<Dtype>{0, 2, 3, 4, 0}));
}

TYPED_TEST(ClipLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  MoveAwayFromKinks<Dtype>(this->bottom_.get(), -0.5, 0.8, 0.05);
  ClipLayer<Dtype> layer(ClipParam(-0.5, 0.8));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ClipLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  // In place, a clipped y lies inside the bounds: backward must use the input.
  ExpectInPlaceMatchesOutOfPlace<Dtype>(ClipParam(-0.5, 0.8), *this->bottom_);
}

TYPED_TEST(ClipLayerTest, MinAboveMaxRefused) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ClipParam(1, -1));
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ClipLayerTest, MissingBoundsRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("clip2");
  ClipLayer<Dtype> layer(param);
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ClipLayerTest, EqualBoundsAccepted) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ClipParam(0.5, 0.5));
  EXPECT_EQ(ForwardOnValues<Dtype>(&layer, {-1, 0.5, 3}), (std::vector<Dtype>{0.5, 0.5, 0.5}));
}

TYPED_TEST(ClipLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Clip");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Clip");
}

}  // namespace
}  // namespace crema
