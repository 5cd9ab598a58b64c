// Normalize: forward values by hand across the image and per position, with
// eps inside the square root (as OpenCV 4.6's NormalizeBBox computes it),
// with shared and per-channel scales; backward and the scale's accumulated
// gradient by hand; gradients against finite differences for every setting;
// in place; refusal of bad eps, bottoms and trained scales; on every device.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/layers/normalize_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class NormalizeLayerTest : public MultiDeviceTest<TypeParam> {};
TYPED_TEST_SUITE(NormalizeLayerTest, TestDtypesAndDevices);

LayerParameter NormalizeParam(const std::string& norm_param) {
  NetParameter net =
      ParseNet("layer { name: 'norm1' type: 'Normalize' norm_param { " + norm_param + " } }");
  return net.layer(0);
}

// Forward on a [1, 2, 1, 2] bottom holding values (channel-major); scale
// values, when given, replace the learned scale.
template <typename Dtype>
std::vector<Dtype> NormalizeForward(const std::string& norm_param,
                                    const std::vector<double>& values,
                                    const std::vector<double>& scale = {}) {
  NormalizeLayer<Dtype> layer(NormalizeParam(norm_param));
  Blob<Dtype> bottom(1, 2, 1, 2), top;
  SetValues(&bottom, values);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  layer.SetUp(bottom_vec, top_vec);
  if (!scale.empty()) SetValues(layer.blobs()[0].get(), scale);
  layer.Forward(bottom_vec, top_vec);
  return std::vector<Dtype>(top.cpu_data(), top.cpu_data() + top.count());
}

template <typename Dtype>
void ExpectNear(const std::vector<Dtype>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-6) << i;
}

TYPED_TEST(NormalizeLayerTest, AcrossSpatialByHand) {
  using Dtype = typename TypeParam::Dtype;
  // 1 + 4 + 4 + 16 = 25: divided by 5.
  ExpectNear(NormalizeForward<Dtype>("", {1, 2, 2, 4}), {0.2, 0.4, 0.4, 0.8});
  // eps inside the root: sqrt(25 + 11) = 6.
  ExpectNear(NormalizeForward<Dtype>("eps: 11", {1, 2, 2, 4}), {1 / 6., 2 / 6., 2 / 6., 4 / 6.});
  // A shared scale of 3.
  ExpectNear(NormalizeForward<Dtype>("", {1, 2, 2, 4}, {3}), {0.6, 1.2, 1.2, 2.4});
}

TYPED_TEST(NormalizeLayerTest, PerPositionByHand) {
  using Dtype = typename TypeParam::Dtype;
  // Position 0 holds (3, 4): norm 5; position 1 holds (0, 2): norm 2.
  ExpectNear(NormalizeForward<Dtype>("across_spatial: false", {3, 0, 4, 2}), {0.6, 0, 0.8, 1});
  // eps 11: norms sqrt(36) = 6 and sqrt(15).
  ExpectNear(NormalizeForward<Dtype>("across_spatial: false eps: 11", {3, 0, 4, 2}),
             {0.5, 0, 4 / 6., 2 / std::sqrt(15.)});
  // One scale per channel: 2 and 10.
  ExpectNear(
      NormalizeForward<Dtype>("across_spatial: false channel_shared: false", {3, 0, 4, 2}, {2, 10}),
      {1.2, 0, 8, 10});
}

TYPED_TEST(NormalizeLayerTest, ScaleFillerAndShapes) {
  using Dtype = typename TypeParam::Dtype;
  NormalizeLayer<Dtype> shared(NormalizeParam(""));
  NormalizeLayer<Dtype> per_channel(
      NormalizeParam("channel_shared: false scale_filler { type: 'constant' value: 20 }"));
  Blob<Dtype> bottom(2, 3, 2, 2), top;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  shared.SetUp(bottom_vec, top_vec);
  per_channel.SetUp(bottom_vec, top_vec);
  EXPECT_EQ(shared.blobs()[0]->shape(), (std::vector<int>{1}));
  EXPECT_EQ(shared.blobs()[0]->cpu_data()[0], 1);
  EXPECT_EQ(per_channel.blobs()[0]->shape(), (std::vector<int>{3}));
  for (int c = 0; c < 3; ++c) EXPECT_EQ(per_channel.blobs()[0]->cpu_data()[c], 20);
}

TYPED_TEST(NormalizeLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  // x = (3, 4) over two channels, eps 0, scale 2: norm 5. With top_diff
  // (1, 0): g = scale * top_diff = (2, 0), sum g x = 6;
  // dx = g / 5 - x * 6 / 125 = (0.256, -0.192); the scale's gradient is
  // sum top_diff * x / 5 = 0.6, added to the 1 already there.
  NormalizeLayer<Dtype> layer(NormalizeParam("eps: 0"));
  Blob<Dtype> bottom(1, 2, 1, 1), top;
  SetValues(&bottom, {3, 4});
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  layer.SetUp(bottom_vec, top_vec);
  SetValues(layer.blobs()[0].get(), {2});
  layer.blobs()[0]->mutable_cpu_diff()[0] = 1;
  layer.Forward(bottom_vec, top_vec);
  ExpectNear(std::vector<Dtype>(top.cpu_data(), top.cpu_data() + 2), {1.2, 1.6});
  top.mutable_cpu_diff()[0] = 1;
  top.mutable_cpu_diff()[1] = 0;
  layer.Backward(top_vec, {true}, bottom_vec);
  ExpectNear(std::vector<Dtype>(bottom.cpu_diff(), bottom.cpu_diff() + 2), {0.256, -0.192});
  EXPECT_NEAR(layer.blobs()[0]->cpu_diff()[0], 1.6, 1e-6);
}

TYPED_TEST(NormalizeLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  for (const std::string setting : {"", "across_spatial: false", "channel_shared: false",
                                    "across_spatial: false "
                                    "channel_shared: false"}) {
    SCOPED_TRACE(setting);
    Context::set_random_seed(1701);
    Blob<Dtype> bottom(2, 3, 2, 3), top;
    FillGaussian(&bottom);
    NormalizeLayer<Dtype> layer(
        NormalizeParam(setting + " scale_filler { type: 'gaussian' mean: 1 std: 0.5 }"));
    std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
    GradientChecker<Dtype> checker(1e-2, 2e-3, 1701);
    checker.CheckGradient(&layer, bottom_vec, top_vec);
  }
}

TYPED_TEST(NormalizeLayerTest, TwoAxisBottom) {
  using Dtype = typename TypeParam::Dtype;
  // [N, C] with no spatial axes: each row normalised (either setting).
  NormalizeLayer<Dtype> layer(NormalizeParam("across_spatial: false"));
  Blob<Dtype> bottom(std::vector<int>{2, 2}), top;
  SetValues(&bottom, {3, 4, 0, -2});
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  ExpectNear(std::vector<Dtype>(top.cpu_data(), top.cpu_data() + 4), {0.6, 0.8, 0, -1});
}

TYPED_TEST(NormalizeLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> input(2, 3, 2, 2);
  Context::set_random_seed(1701);
  FillGaussian(&input);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(
      NormalizeParam("across_spatial: false channel_shared: false "
                     "scale_filler { type: 'constant' value: 3 }"),
      input);
}

TYPED_TEST(NormalizeLayerTest, BadSettingsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(2, 3, 2, 2), top;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  for (const std::string bad : {"eps: -1", "eps: inf", "eps: nan"}) {
    SCOPED_TRACE(bad);
    NormalizeLayer<Dtype> layer(NormalizeParam(bad));
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec, top_vec);
  }
  Blob<Dtype> flat(std::vector<int>{6});
  std::vector<Blob<Dtype>*> flat_vec{&flat};
  NormalizeLayer<Dtype> one_axis(NormalizeParam(""));
  ExpectSetUpThrowsNamingLayer<Dtype>(&one_axis, flat_vec, top_vec);
}

TYPED_TEST(NormalizeLayerTest, TrainedScaleOfWrongSizeRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = NormalizeParam("channel_shared: false");
  BlobProto* scale = param.add_blobs();
  scale->mutable_shape()->add_dim(2);
  scale->add_data(1);
  scale->add_data(1);
  NormalizeLayer<Dtype> layer(param);
  Blob<Dtype> bottom(2, 3, 2, 2), top;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec, top_vec);
}

TYPED_TEST(NormalizeLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Normalize");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Normalize");
}

}  // namespace
}  // namespace crema
