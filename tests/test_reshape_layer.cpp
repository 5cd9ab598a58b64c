// Reshape: top shapes with explicit sizes, 0 (copy) and -1 (infer), partial
// reshapes with axis and num_axes, sharing of data and gradient, and the
// shapes it refuses.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/layers/reshape_layer.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter ReshapeParam(const std::vector<int>& shape, int axis = 0, int num_axes = -1) {
  LayerParameter param;
  param.set_name("view");
  param.set_type("Reshape");
  ReshapeParameter* reshape = param.mutable_reshape_param();
  for (int dim : shape) reshape->mutable_shape()->add_dim(dim);
  reshape->set_axis(axis);
  reshape->set_num_axes(num_axes);
  return param;
}

template <typename TypeParam>
class ReshapeLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ReshapeLayerTest() : bottom_(2, 3, 4, 5) {
    for (int i = 0; i < bottom_.count(); ++i) bottom_.mutable_cpu_data()[i] = i;
    bottom_vec_ = {&bottom_};
    top_vec_ = {&top_};
  }
  std::vector<int> TopShape(const LayerParameter& param) {
    ReshapeLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    return top_.shape();
  }
  Blob<Dtype> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ReshapeLayerTest, TestDtypesAndDevices);

using Shape = std::vector<int>;

TYPED_TEST(ReshapeLayerTest, ExplicitCopiedAndInferredSizes) {
  EXPECT_EQ(this->TopShape(ReshapeParam({6, 20})), (Shape{6, 20}));
  EXPECT_EQ(this->TopShape(ReshapeParam({0, -1})), (Shape{2, 60}));
  EXPECT_EQ(this->TopShape(ReshapeParam({-1})), (Shape{120}));
  EXPECT_EQ(this->TopShape(ReshapeParam({0, 0, -1, 2})), (Shape{2, 3, 10, 2}));
  EXPECT_EQ(this->TopShape(ReshapeParam({-1, 0, 1, 0})), (Shape{8, 3, 1, 5}));
  EXPECT_EQ(this->TopShape(ReshapeParam({0, 0, 0, 0})), (Shape{2, 3, 4, 5}));
}

TYPED_TEST(ReshapeLayerTest, PartialReshapes) {
  // Axes 1 and 2 (3 x 4) become 12.
  EXPECT_EQ(this->TopShape(ReshapeParam({12}, 1, 2)), (Shape{2, 12, 5}));
  // Inserting an axis of size 1 before the first, and after the last.
  EXPECT_EQ(this->TopShape(ReshapeParam({1}, 0, 0)), (Shape{1, 2, 3, 4, 5}));
  EXPECT_EQ(this->TopShape(ReshapeParam({1}, -1, 0)), (Shape{2, 3, 4, 5, 1}));
  // From the second-to-last axis on: 0 copies axis 2, -1 infers axis 3.
  EXPECT_EQ(this->TopShape(ReshapeParam({0, -1}, -3)), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(this->TopShape(ReshapeParam({2, -1}, 1)), (Shape{2, 2, 30}));
}

TYPED_TEST(ReshapeLayerTest, SharesDataAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  ReshapeLayer<Dtype> layer(ReshapeParam({-1, 4}));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (Shape{30, 4}));
  EXPECT_EQ(this->top_.cpu_data(), this->bottom_.cpu_data());
  for (int i = 0; i < this->top_.count(); ++i) EXPECT_EQ(this->top_.cpu_data()[i], i);
  for (int i = 0; i < this->top_.count(); ++i) this->top_.mutable_cpu_diff()[i] = 2 * i;
  layer.Backward(this->top_vec_, std::vector<bool>{true}, this->bottom_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], 2 * i);
}

TYPED_TEST(ReshapeLayerTest, FollowsTheBottomWhenItChanges) {
  using Dtype = typename TypeParam::Dtype;
  ReshapeLayer<Dtype> layer(ReshapeParam({0, -1}));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_.Reshape(std::vector<int>{4, 2, 3});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (Shape{4, 6}));
}

TYPED_TEST(ReshapeLayerTest, RefusesTwoInferredSizes) {
  using Dtype = typename TypeParam::Dtype;
  ReshapeLayer<Dtype> layer(ReshapeParam({-1, 4, -1}));
  ExpectSetUpError(&layer, this->bottom_vec_, this->top_vec_, "a -1 at positions 0 and 2");
}

TYPED_TEST(ReshapeLayerTest, RefusesTheWrongCount) {
  using Dtype = typename TypeParam::Dtype;
  ReshapeLayer<Dtype> wrong_count(ReshapeParam({7, 20}));
  ExpectSetUpError(&wrong_count, this->bottom_vec_, this->top_vec_,
                   "the new shape 7 20 (140) does not hold the 120 elements of the bottom "
                   "2 3 4 5 (120)");
  ReshapeLayer<Dtype> not_divisible(ReshapeParam({7, -1}));
  ExpectSetUpError(&not_divisible, this->bottom_vec_, this->top_vec_,
                   "not a multiple of the other sizes' product 7");
}

TYPED_TEST(ReshapeLayerTest, RefusesBadShapesAndAxes) {
  using Dtype = typename TypeParam::Dtype;
  ReshapeLayer<Dtype> negative(ReshapeParam({-2, 60}));
  ExpectSetUpError(&negative, this->bottom_vec_, this->top_vec_, "shape dim 0 is -2");
  ReshapeLayer<Dtype> nothing_to_copy(ReshapeParam({0, 0}, 3));
  ExpectSetUpError(&nothing_to_copy, this->bottom_vec_, this->top_vec_, "no axis 4 to copy");
  ReshapeLayer<Dtype> bad_axis(ReshapeParam({-1}, 5));
  ExpectSetUpError(&bad_axis, this->bottom_vec_, this->top_vec_, "axis 5");
  ReshapeLayer<Dtype> too_many_axes(ReshapeParam({-1}, 2, 3));
  ExpectSetUpError(&too_many_axes, this->bottom_vec_, this->top_vec_, "num_axes 3");
  ReshapeLayer<Dtype> bad_num_axes(ReshapeParam({-1}, 0, -2));
  ExpectSetUpError(&bad_num_axes, this->bottom_vec_, this->top_vec_, "num_axes must be");
  ReshapeLayer<Dtype> in_place(ReshapeParam({-1}));
  ExpectSetUpError(&in_place, this->bottom_vec_, this->bottom_vec_, "in place");
}

TYPED_TEST(ReshapeLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(ReshapeParam({-1}))->type(), "Reshape");
}

}  // namespace
}  // namespace crema
