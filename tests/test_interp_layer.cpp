// Interp: forward values by hand for zoom_factor, shrink_factor, both,
// explicit height and width, a second bottom and cropping by pad_beg /
// pad_end; backward by hand; gradients against finite differences when
// enlarging, shrinking and cropping; refusal of bad parameters and sizes.
#include <gtest/gtest.h>

#include <climits>
#include <memory>
#include <vector>

#include "crema/layers/interp_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class InterpLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  InterpLayerTest() : top_(new Blob<Dtype>()) { top_vec_.push_back(top_.get()); }

  // Runs the layer forward on one [H, W] plane holding values and returns
  // the output plane.
  std::vector<Dtype> Forward(const LayerParameter& param, int height, int width,
                             const std::vector<double>& values) {
    Blob<Dtype> bottom(1, 1, height, width);
    SetValues(&bottom, values);
    std::vector<Blob<Dtype>*> bottom_vec{&bottom};
    InterpLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec, top_vec_);
    layer.Forward(bottom_vec, top_vec_);
    return std::vector<Dtype>(top_->cpu_data(), top_->cpu_data() + top_->count());
  }

  void ExpectNear(const std::vector<Dtype>& actual, const std::vector<double>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << i;
  }

  // Expects SetUp on a bottom of the given shape to refuse param.
  void ExpectRefused(const LayerParameter& param, const std::vector<int>& shape) {
    Blob<Dtype> bottom(shape);
    std::vector<Blob<Dtype>*> bottom_vec{&bottom};
    InterpLayer<Dtype> layer(param);
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec, top_vec_);
  }

  std::unique_ptr<Blob<Dtype>> top_;
  std::vector<Blob<Dtype>*> top_vec_;
};
TYPED_TEST_SUITE(InterpLayerTest, TestDtypesAndDevices);

LayerParameter InterpParam() {
  LayerParameter param;
  param.set_name("interp1");
  param.set_type("Interp");
  return param;
}

LayerParameter ZoomParam(int zoom) {
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_zoom_factor(zoom);
  return param;
}

TYPED_TEST(InterpLayerTest, ZoomByHand) {
  // 2 x 2 zoomed by 2: 2 + 1 * (2 - 1) = 3, the midpoints averaged.
  const auto top = this->Forward(ZoomParam(2), 2, 2, {0, 1, 2, 3});
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 3, 3}));
  this->ExpectNear(top, {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3});
}

TYPED_TEST(InterpLayerTest, ZoomOneKeepsInput) {
  const auto top = this->Forward(ZoomParam(1), 2, 3, {1, -2, 3, 4, 5, -6});
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 2, 3}));
  this->ExpectNear(top, {1, -2, 3, 4, 5, -6});
}

TYPED_TEST(InterpLayerTest, ShrinkByHand) {
  // 3 x 3 shrunk by 2: (3 - 1) / 2 + 1 = 2, the corners.
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_shrink_factor(2);
  const auto top = this->Forward(param, 3, 3, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 2, 2}));
  this->ExpectNear(top, {0, 2, 6, 8});
}

TYPED_TEST(InterpLayerTest, ShrinkThenZoomSize) {
  // Height 3: shrink 2 gives 2, zoom 3 gives 2 + 1 * 2 = 4. Width 5: shrink
  // gives 3, zoom gives 3 + 2 * 2 = 7. Corners stay corners.
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_shrink_factor(2);
  param.mutable_interp_param()->set_zoom_factor(3);
  std::vector<double> values(15);
  for (int i = 0; i < 15; ++i) values[i] = i;
  const auto top = this->Forward(param, 3, 5, values);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 4, 7}));
  EXPECT_NEAR(top[0], 0, 1e-5);
  EXPECT_NEAR(top[6], 4, 1e-5);
  EXPECT_NEAR(top[21], 10, 1e-5);
  EXPECT_NEAR(top[27], 14, 1e-5);
  // Row 0, column 1 samples input column 4 / 6 = 2 / 3.
  EXPECT_NEAR(top[1], 2.0 / 3, 1e-5);
}

TYPED_TEST(InterpLayerTest, ExplicitSizeByHand) {
  // 3 x 2 to 2 x 3: rows sample input rows 0 and 2, columns 0, 0.5 and 1.
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_height(2);
  param.mutable_interp_param()->set_width(3);
  const auto top = this->Forward(param, 3, 2, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 2, 3}));
  this->ExpectNear(top, {0, 0.5, 1, 4, 4.5, 5});
}

TYPED_TEST(InterpLayerTest, ExplicitSizeNotOnGridByHand) {
  // 2 x 2 to 1 x 4: one row samples input row 0; columns at 0, 1/3, 2/3, 1.
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_height(1);
  param.mutable_interp_param()->set_width(4);
  const auto top = this->Forward(param, 2, 2, {3, 6, 100, 100});
  this->ExpectNear(top, {3, 4, 5, 6});
}

TYPED_TEST(InterpLayerTest, CropThenZoomByHand) {
  // 4 x 4 cropped by one on each side leaves [[5, 6], [9, 10]], zoomed by 2.
  LayerParameter param = ZoomParam(2);
  param.mutable_interp_param()->set_pad_beg(-1);
  param.mutable_interp_param()->set_pad_end(-1);
  std::vector<double> values(16);
  for (int i = 0; i < 16; ++i) values[i] = i;
  const auto top = this->Forward(param, 4, 4, values);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 3, 3}));
  this->ExpectNear(top, {5, 5.5, 6, 7, 7.5, 8, 9, 9.5, 10});
}

TYPED_TEST(InterpLayerTest, SecondBottomGivesSize) {
  using Dtype = typename TypeParam::Dtype;
  // bottom[1]'s H, W win over zoom_factor; channels and batch come from
  // bottom[0].
  Blob<Dtype> bottom(1, 2, 2, 2), reference(5, 7, 3, 2);
  SetValues(&bottom, {0, 1, 2, 3, 10, 10, 20, 20});
  std::vector<Blob<Dtype>*> bottom_vec{&bottom, &reference};
  InterpLayer<Dtype> layer(ZoomParam(4));
  layer.SetUp(bottom_vec, this->top_vec_);
  layer.Forward(bottom_vec, this->top_vec_);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 2, 3, 2}));
  this->ExpectNear(std::vector<Dtype>(this->top_->cpu_data(), this->top_->cpu_data() + 12),
                   {0, 1, 1, 2, 2, 3, 10, 10, 15, 15, 20, 20});
}

TYPED_TEST(InterpLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  // Zoom 2 of 2 x 2: each input takes its corner's gradient, half of its
  // two edge midpoints' and a quarter of the centre's. With top diff 0..8:
  // input (0, 0) gets 0 + (1 + 3) / 2 + 4 / 4 = 3, and so on.
  Blob<Dtype> bottom(1, 1, 2, 2);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  InterpLayer<Dtype> layer(ZoomParam(2));
  layer.SetUp(bottom_vec, this->top_vec_);
  layer.Forward(bottom_vec, this->top_vec_);
  for (int i = 0; i < 9; ++i) this->top_->mutable_cpu_diff()[i] = i;
  layer.Backward(this->top_vec_, {true}, bottom_vec);
  this->ExpectNear(std::vector<Dtype>(bottom.cpu_diff(), bottom.cpu_diff() + 4), {3, 6, 12, 15});
}

TYPED_TEST(InterpLayerTest, BackwardLeavesCroppedInputsZero) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_pad_beg(-1);
  param.mutable_interp_param()->set_height(1);
  param.mutable_interp_param()->set_width(1);
  Blob<Dtype> bottom(1, 1, 2, 2);
  cpu_set(4, Dtype(7), bottom.mutable_cpu_diff());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  InterpLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, this->top_vec_);
  layer.Forward(bottom_vec, this->top_vec_);
  this->top_->mutable_cpu_diff()[0] = 2;
  layer.Backward(this->top_vec_, {true}, bottom_vec);
  this->ExpectNear(std::vector<Dtype>(bottom.cpu_diff(), bottom.cpu_diff() + 4), {0, 0, 0, 2});
}

// Finite differences on a 2 x 3 x 5 x 6 bottom with random values.
template <typename Dtype>
void CheckInterpGradient(const LayerParameter& param, std::vector<Blob<Dtype>*> extra = {}) {
  Context::set_random_seed(1701);
  Blob<Dtype> bottom(2, 3, 5, 6), top;
  FillGaussian(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  for (Blob<Dtype>* blob : extra) bottom_vec.push_back(blob);
  InterpLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, top_vec, 0);
}

TYPED_TEST(InterpLayerTest, GradientZoom) {
  CheckInterpGradient<typename TypeParam::Dtype>(ZoomParam(3));
}

TYPED_TEST(InterpLayerTest, GradientLargeZoomWithCrop) {
  LayerParameter param = ZoomParam(8);
  param.mutable_interp_param()->set_pad_beg(-1);
  param.mutable_interp_param()->set_pad_end(-2);
  CheckInterpGradient<typename TypeParam::Dtype>(param);
}

TYPED_TEST(InterpLayerTest, GradientShrink) {
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_shrink_factor(2);
  CheckInterpGradient<typename TypeParam::Dtype>(param);
}

TYPED_TEST(InterpLayerTest, GradientExplicitSizeOffGrid) {
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_height(4);
  param.mutable_interp_param()->set_width(9);
  CheckInterpGradient<typename TypeParam::Dtype>(param);
}

TYPED_TEST(InterpLayerTest, GradientSecondBottomToOnePixel) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> reference(1, 1, 1, 3);
  CheckInterpGradient<Dtype>(InterpParam(), {&reference});
}

TYPED_TEST(InterpLayerTest, PositivePadRefused) {
  LayerParameter param = ZoomParam(2);
  param.mutable_interp_param()->set_pad_beg(1);
  this->ExpectRefused(param, {1, 1, 3, 3});
  LayerParameter end = ZoomParam(2);
  end.mutable_interp_param()->set_pad_end(1);
  this->ExpectRefused(end, {1, 1, 3, 3});
}

TYPED_TEST(InterpLayerTest, FactorBelowOneRefused) {
  this->ExpectRefused(ZoomParam(0), {1, 1, 3, 3});
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_shrink_factor(0);
  this->ExpectRefused(param, {1, 1, 3, 3});
}

TYPED_TEST(InterpLayerTest, NonPositiveExplicitSizeRefused) {
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_height(0);
  param.mutable_interp_param()->set_width(3);
  this->ExpectRefused(param, {1, 1, 3, 3});
}

TYPED_TEST(InterpLayerTest, NoSizeRefused) {
  this->ExpectRefused(InterpParam(), {1, 1, 3, 3});
  LayerParameter height_only = InterpParam();
  height_only.mutable_interp_param()->set_height(4);
  this->ExpectRefused(height_only, {1, 1, 3, 3});
}

TYPED_TEST(InterpLayerTest, CropOfEverythingRefused) {
  LayerParameter param = ZoomParam(2);
  param.mutable_interp_param()->set_pad_beg(-2);
  param.mutable_interp_param()->set_pad_end(-1);
  this->ExpectRefused(param, {1, 1, 3, 3});
}

TYPED_TEST(InterpLayerTest, HugeOutputRefused) {
  this->ExpectRefused(ZoomParam(INT_MAX), {1, 1, 3, 3});
  LayerParameter param = InterpParam();
  param.mutable_interp_param()->set_height(INT_MAX);
  param.mutable_interp_param()->set_width(2);
  this->ExpectRefused(param, {1, 1, 3, 3});
}

TYPED_TEST(InterpLayerTest, NonPlanarBottomRefused) { this->ExpectRefused(ZoomParam(2), {3, 3}); }

TYPED_TEST(InterpLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(ZoomParam(2))->type(), "Interp");
}

}  // namespace
}  // namespace crema
