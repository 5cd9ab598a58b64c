// The YOLO forks' layers: Upsample's nearest form (told apart from SegNet's
// unpooling by its parameters), Reorg with darknet's index map, Mish.
// Values by hand or from the forks' formulas, gradients against finite
// differences, refusals naming the layer, on every device.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layer_factory.hpp"
#include "crema/layers/mish_layer.hpp"
#include "crema/layers/nearest_upsample_layer.hpp"
#include "crema/layers/reorg_layer.hpp"
#include "crema/layers/upsample_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class YoloForkLayerTest : public MultiDeviceTest<TypeParam> {};
TYPED_TEST_SUITE(YoloForkLayerTest, TestDtypesAndDevices);

LayerParameter YoloParam(const std::string& text) {
  return ParseNet("layer { " + text + " }").layer(0);
}

// One bottom and only scale: the YOLO forks' nearest neighbour; two bottoms
// (or any of SegNet's other fields): SegNet's max unpooling.
TYPED_TEST(YoloForkLayerTest, UpsampleFormFollowsTheParameters) {
  using Dtype = typename TypeParam::Dtype;
  const auto made = [](const std::string& text) {
    return LayerRegistry<Dtype>::CreateLayer(YoloParam("name: 'up' type: 'Upsample' " + text));
  };
  EXPECT_NE(dynamic_cast<NearestUpsampleLayer<Dtype>*>(
                made("bottom: 'x' top: 'y' upsample_param { scale: 2 }").get()),
            nullptr);
  EXPECT_NE(dynamic_cast<UpsampleLayer<Dtype>*>(
                made("bottom: 'x' bottom: 'mask' top: 'y' upsample_param { scale: 2 }").get()),
            nullptr);
  EXPECT_NE(dynamic_cast<UpsampleLayer<Dtype>*>(
                made("bottom: 'x' top: 'y' upsample_param { upsample_h: 4 upsample_w: 4 }").get()),
            nullptr);
}

TYPED_TEST(YoloForkLayerTest, NearestUpsampleByHandAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1, 2, 2, 3}), top;
  std::iota(bottom.mutable_cpu_data(), bottom.mutable_cpu_data() + 12, Dtype(0));
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  NearestUpsampleLayer<Dtype> layer(
      YoloParam("name: 'up' type: 'Upsample' bottom: 'x' top: 'y' upsample_param { scale: 2 }"));
  layer.SetUp(bottom_vec, top_vec);
  ASSERT_EQ(top.shape(), (std::vector<int>{1, 2, 4, 6}));
  layer.Forward(bottom_vec, top_vec);
  // top[c][h][w] = bottom[c][h / 2][w / 2]
  for (int c = 0; c < 2; ++c) {
    for (int h = 0; h < 4; ++h) {
      for (int w = 0; w < 6; ++w) {
        EXPECT_EQ(top.cpu_data()[(c * 4 + h) * 6 + w],
                  bottom.cpu_data()[(c * 2 + h / 2) * 3 + w / 2]);
      }
    }
  }
  for (int i = 0; i < top.count(); ++i) top.mutable_cpu_diff()[i] = Dtype(i % 5);
  layer.Backward(top_vec, {true}, bottom_vec);
  // bottom 0 of channel 0 gathers top (0,0), (0,1), (1,0), (1,1): 0 + 1 + 6 + 7.
  EXPECT_EQ(bottom.cpu_diff()[0], Dtype(0 % 5 + 1 % 5 + 6 % 5 + 7 % 5));
  Blob<Dtype> random(std::vector<int>{2, 3, 3, 4});
  FillGaussian(&random);
  std::vector<Blob<Dtype>*> random_vec{&random};
  NearestUpsampleLayer<Dtype> three(
      YoloParam("name: 'up' type: 'Upsample' bottom: 'x' top: 'y' upsample_param { scale: 3 }"));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&three, random_vec, top_vec);
  NearestUpsampleLayer<Dtype> zero(
      YoloParam("name: 'up' type: 'Upsample' bottom: 'x' top: 'y' upsample_param { scale: 0 }"));
  ExpectSetUpThrowsNamingLayer<Dtype>(&zero, bottom_vec, top_vec);
}

// The forks' example: a [1, 4, 2, 2] bottom of 0..15 at stride 2 gives
// darknet's order, not space-to-depth's (0, 4, 8, 12, 1, 5, ...).
TYPED_TEST(YoloForkLayerTest, ReorgFollowsDarknetsMap) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1, 4, 2, 2}), top, back;
  std::iota(bottom.mutable_cpu_data(), bottom.mutable_cpu_data() + 16, Dtype(0));
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top}, back_vec{&back};
  ReorgLayer<Dtype> layer(
      YoloParam("name: 'reorg' type: 'Reorg' bottom: 'x' top: 'y' reorg_param { stride: 2 }"));
  layer.SetUp(bottom_vec, top_vec);
  ASSERT_EQ(top.shape(), (std::vector<int>{1, 16, 1, 1}));
  layer.Forward(bottom_vec, top_vec);
  const int darknet[] = {0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(top.cpu_data()[i], Dtype(darknet[i])) << i;
  // reverse is the inverse map, on the forward's output.
  ReorgLayer<Dtype> reverse(YoloParam(
      "name: 'back' type: 'Reorg' bottom: 'y' top: 'z' reorg_param { stride: 2 reverse: true }"));
  Blob<Dtype> as_four(std::vector<int>{1, 4, 2, 2});  // the inverse reads the bottom's sizes
  as_four.CopyFrom(top, false, true);
  as_four.Reshape({1, 4, 2, 2});
  std::vector<Blob<Dtype>*> four_vec{&as_four};
  reverse.SetUp(four_vec, back_vec);
  ASSERT_EQ(back.shape(), (std::vector<int>{1, 1, 4, 4}));
  reverse.Forward(four_vec, back_vec);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back.cpu_data()[i], Dtype(i)) << "round trip " << i;
}

TYPED_TEST(YoloForkLayerTest, ReorgGradientAndRefusals) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 8, 4, 6}), top;
  FillGaussian(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  for (const std::string reverse : {"false", "true"}) {
    ReorgLayer<Dtype> layer(
        YoloParam("name: 'reorg' type: 'Reorg' bottom: 'x' top: 'y' "
                  "reorg_param { stride: 2 reverse: " +
                  reverse + " }"));
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradient(&layer, bottom_vec, top_vec);
  }
  for (const std::string text :
       {"reorg_param { }", "reorg_param { stride: 3 }", "reorg_param { stride: 0 }"}) {
    ReorgLayer<Dtype> layer(YoloParam("name: 'reorg' type: 'Reorg' bottom: 'x' top: 'y' " + text));
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec, top_vec);
  }
}

// Mish against x tanh(log(1 + e^x)) at chosen points (the forks' thresholds
// at +-20), and its gradient.
TYPED_TEST(YoloForkLayerTest, MishValuesAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  const double xs[] = {-30, -5, -1, -0.25, 0, 0.5, 2, 10, 25};
  Blob<Dtype> bottom(std::vector<int>{9}), top;
  for (int i = 0; i < 9; ++i) bottom.mutable_cpu_data()[i] = Dtype(xs[i]);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  MishLayer<Dtype> layer(YoloParam("name: 'mish' type: 'Mish' bottom: 'x' top: 'y'"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  for (int i = 0; i < 9; ++i) {
    const double softplus =
        xs[i] > 20 ? xs[i] : (xs[i] < -20 ? std::exp(xs[i]) : std::log1p(std::exp(xs[i])));
    EXPECT_NEAR(top.cpu_data()[i], xs[i] * std::tanh(softplus), 1e-6) << xs[i];
  }
  Blob<Dtype> random(std::vector<int>{2, 3, 4, 5});
  FillGaussian(&random);
  std::vector<Blob<Dtype>*> random_vec{&random};
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientEltwise(&layer, random_vec, top_vec);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(YoloParam("name: 'mish' type: 'Mish'"), random);
}

}  // namespace
}  // namespace crema
