// Tile: values by hand along axes 0, 1 and the last, gradients against
// finite differences and by hand, and the configurations it refuses.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/tile_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter TileParam(int axis, int tiles) {
  LayerParameter param;
  param.set_name("repeat");
  param.set_type("Tile");
  param.mutable_tile_param()->set_axis(axis);
  param.mutable_tile_param()->set_tiles(tiles);
  return param;
}

template <typename TypeParam>
class TileLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Bottom 2 x 2 holding 1 2 | 3 4.
  TileLayerTest() : bottom_(std::vector<int>{2, 2}) {
    for (int i = 0; i < 4; ++i) bottom_.mutable_cpu_data()[i] = i + 1;
    bottom_vec_ = {&bottom_};
    top_vec_ = {&top_};
  }
  void ExpectForward(const LayerParameter& param, const std::vector<int>& shape,
                     const std::vector<Dtype>& values) {
    TileLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    ASSERT_EQ(top_.shape(), shape);
    for (int i = 0; i < top_.count(); ++i) EXPECT_EQ(top_.cpu_data()[i], values[i]) << i;
  }
  Blob<Dtype> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(TileLayerTest, TestDtypesAndDevices);

TYPED_TEST(TileLayerTest, ForwardByHand) {
  this->ExpectForward(TileParam(1, 3), {2, 6}, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  this->ExpectForward(TileParam(0, 2), {4, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  this->ExpectForward(TileParam(-1, 1), {2, 2}, {1, 2, 3, 4});
}

TYPED_TEST(TileLayerTest, ForwardAlongAMiddleAxis) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 1, 3});
  for (int i = 0; i < 6; ++i) bottom.mutable_cpu_data()[i] = i;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  TileLayer<Dtype> layer(TileParam(1, 2));
  layer.SetUp(bottom_vec, this->top_vec_);
  layer.Forward(bottom_vec, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (std::vector<int>{2, 2, 3}));
  const Dtype expected[] = {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(this->top_.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(TileLayerTest, BackwardSumsTheCopies) {
  using Dtype = typename TypeParam::Dtype;
  TileLayer<Dtype> layer(TileParam(1, 3));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 12; ++i) this->top_.mutable_cpu_diff()[i] = i;
  layer.Backward(this->top_vec_, std::vector<bool>{true}, this->bottom_vec_);
  // Row 0 of the top is 0..5 (copies of bottom row 0), row 1 is 6..11.
  const Dtype expected[] = {0 + 2 + 4, 1 + 3 + 5, 6 + 8 + 10, 7 + 9 + 11};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], expected[i]) << i;
}

TYPED_TEST(TileLayerTest, GradientAxis1) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(2, 3, 2, 2);
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  TileLayer<Dtype> layer(TileParam(1, 3));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->top_vec_);
}

TYPED_TEST(TileLayerTest, GradientAxis0) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(2, 3, 2, 2);
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  TileLayer<Dtype> layer(TileParam(0, 2));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->top_vec_);
}

TYPED_TEST(TileLayerTest, RefusesBadConfigurations) {
  using Dtype = typename TypeParam::Dtype;
  TileLayer<Dtype> no_tiles(TileParam(1, 0));
  ExpectSetUpError(&no_tiles, this->bottom_vec_, this->top_vec_, "tiles must be positive, got 0");
  LayerParameter unset = TileParam(1, 2);
  unset.mutable_tile_param()->clear_tiles();
  TileLayer<Dtype> missing(unset);
  ExpectSetUpError(&missing, this->bottom_vec_, this->top_vec_, "needs tiles");
  TileLayer<Dtype> bad_axis(TileParam(2, 2));
  ExpectSetUpError(&bad_axis, this->bottom_vec_, this->top_vec_, "axis 2");
}

TYPED_TEST(TileLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(TileParam(1, 2))->type(), "Tile");
}

}  // namespace
}  // namespace crema
