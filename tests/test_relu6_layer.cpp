// ReLU6: forward and backward values by hand (no gradient at either kink),
// gradients against finite differences away from the kinks, in place, on
// every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/relu6_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ReLU6LayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Values spread over [-2, 8], both sides of both kinks.
  ReLU6LayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillerParameter filler_param;
    filler_param.set_type("uniform");
    filler_param.set_min(-2);
    filler_param.set_max(8);
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ReLU6LayerTest, TestDtypesAndDevices);

LayerParameter ReLU6Param() {
  LayerParameter param;
  param.set_name("relu6");
  param.set_type("ReLU6");
  return param;
}

// Moves values within margin of 0 or 6 to margin past it, so the finite
// differences never straddle a kink.
template <typename Dtype>
void MoveAwayFromKinks(Blob<Dtype>* blob, Dtype margin) {
  Dtype* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) {
    for (const Dtype kink : {Dtype(0), Dtype(6)}) {
      if (std::fabs(data[i] - kink) < margin)
        data[i] = data[i] < kink ? kink - margin : kink + margin;
    }
  }
}

TYPED_TEST(ReLU6LayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ReLU6Layer<Dtype> layer(ReLU6Param());
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, {-3, -0.5, 0, 0.5, 3, 6, 7.5});
  EXPECT_EQ(top, (std::vector<Dtype>{0, 0, 0, 0.5, 3, 6, 6}));
}

TYPED_TEST(ReLU6LayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ReLU6Layer<Dtype> layer(ReLU6Param());
  const std::vector<Dtype> bottom_diff =
      BackwardOnValues<Dtype>(&layer, {-3, -0.5, 0, 0.5, 3, 6, 7.5}, {1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(bottom_diff, (std::vector<Dtype>{0, 0, 0, 4, 5, 0, 0}));
}

// Enough values that the passes split over the thread pool: every value,
// in every part, gets the formula.
TYPED_TEST(ReLU6LayerTest, LargeBlobEveryValueByFormula) {
  using Dtype = typename TypeParam::Dtype;
  std::vector<Dtype> input(100003), top_diff(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    input[i] = Dtype(static_cast<int>(i % 17) - 4);  // -4 .. 12: both sides of 0 and 6
    top_diff[i] = Dtype(i % 5 + 1);
  }
  ReLU6Layer<Dtype> forward_layer(ReLU6Param());
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&forward_layer, input);
  ReLU6Layer<Dtype> backward_layer(ReLU6Param());
  const std::vector<Dtype> bottom_diff = BackwardOnValues<Dtype>(&backward_layer, input, top_diff);
  for (size_t i = 0; i < input.size(); ++i) {
    ASSERT_EQ(top[i], std::min(std::max(input[i], Dtype(0)), Dtype(6))) << i;
    ASSERT_EQ(bottom_diff[i], input[i] > 0 && input[i] < 6 ? top_diff[i] : Dtype(0)) << i;
  }
}

TYPED_TEST(ReLU6LayerTest, NaNPassesForwardAndStopsTheGradient) {
  using Dtype = typename TypeParam::Dtype;
  const Dtype nan = std::numeric_limits<Dtype>::quiet_NaN();
  ReLU6Layer<Dtype> forward_layer(ReLU6Param());
  EXPECT_TRUE(std::isnan(ForwardOnValues<Dtype>(&forward_layer, {nan})[0]));
  ReLU6Layer<Dtype> backward_layer(ReLU6Param());
  EXPECT_EQ(BackwardOnValues<Dtype>(&backward_layer, {nan, 1}, {2, 3}), (std::vector<Dtype>{0, 3}));
}

TYPED_TEST(ReLU6LayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  MoveAwayFromKinks<Dtype>(this->bottom_.get(), 0.05);
  ReLU6Layer<Dtype> layer(ReLU6Param());
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ReLU6LayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  ExpectInPlaceMatchesOutOfPlace<Dtype>(ReLU6Param(), *this->bottom_);
}

TYPED_TEST(ReLU6LayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(ReLU6Param())->type(), "ReLU6");
}

}  // namespace
}  // namespace crema
