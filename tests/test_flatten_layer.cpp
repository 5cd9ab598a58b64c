// Flatten: top shapes for the default and other axis ranges, sharing of data
// and gradient with the bottom, and the configurations it refuses.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/layers/flatten_layer.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter FlattenParam() {
  LayerParameter param;
  param.set_name("flat");
  param.set_type("Flatten");
  return param;
}

LayerParameter FlattenParam(int axis, int end_axis) {
  LayerParameter param = FlattenParam();
  param.mutable_flatten_param()->set_axis(axis);
  param.mutable_flatten_param()->set_end_axis(end_axis);
  return param;
}

template <typename TypeParam>
class FlattenLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  FlattenLayerTest() : bottom_(2, 3, 4, 5) {
    for (int i = 0; i < bottom_.count(); ++i) bottom_.mutable_cpu_data()[i] = i;
    bottom_vec_ = {&bottom_};
    top_vec_ = {&top_};
  }
  std::vector<int> TopShape(const LayerParameter& param) {
    FlattenLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    return top_.shape();
  }
  Blob<Dtype> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(FlattenLayerTest, TestDtypesAndDevices);

TYPED_TEST(FlattenLayerTest, TopShapes) {
  EXPECT_EQ(this->TopShape(FlattenParam()), (std::vector<int>{2, 60}));
  EXPECT_EQ(this->TopShape(FlattenParam(1, 2)), (std::vector<int>{2, 12, 5}));
  EXPECT_EQ(this->TopShape(FlattenParam(0, -1)), (std::vector<int>{120}));
  EXPECT_EQ(this->TopShape(FlattenParam(-2, -1)), (std::vector<int>{2, 3, 20}));
  EXPECT_EQ(this->TopShape(FlattenParam(2, 2)), (std::vector<int>{2, 3, 4, 5}));
}

TYPED_TEST(FlattenLayerTest, SharesDataAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  FlattenLayer<Dtype> layer(FlattenParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.cpu_data(), this->bottom_.cpu_data());
  for (int i = 0; i < this->top_.count(); ++i) EXPECT_EQ(this->top_.cpu_data()[i], i);
  for (int i = 0; i < this->top_.count(); ++i) this->top_.mutable_cpu_diff()[i] = -i;
  layer.Backward(this->top_vec_, std::vector<bool>{true}, this->bottom_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], -i);
}

TYPED_TEST(FlattenLayerTest, RefusesBadConfigurations) {
  using Dtype = typename TypeParam::Dtype;
  FlattenLayer<Dtype> bad_axis(FlattenParam(4, -1));
  ExpectSetUpError(&bad_axis, this->bottom_vec_, this->top_vec_, "axis 4");
  FlattenLayer<Dtype> bad_end(FlattenParam(1, -5));
  ExpectSetUpError(&bad_end, this->bottom_vec_, this->top_vec_, "end_axis -5");
  FlattenLayer<Dtype> backwards(FlattenParam(2, 1));
  ExpectSetUpError(&backwards, this->bottom_vec_, this->top_vec_, "comes before axis 2");
  FlattenLayer<Dtype> in_place(FlattenParam());
  ExpectSetUpError(&in_place, this->bottom_vec_, this->bottom_vec_, "in place");
}

TYPED_TEST(FlattenLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(FlattenParam())->type(), "Flatten");
}

}  // namespace
}  // namespace crema
