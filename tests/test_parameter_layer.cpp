// Parameter: a zero blob of the configured shape exposed as the top, trained
// values from the model, the top following the blob's values, the gradient
// accumulating into the blob (by hand and against finite differences), and
// refusal of a model blob of the wrong shape or a bad shape.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/layers/parameter_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ParameterLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ParameterLayerTest() : top_(new Blob<Dtype>()) { top_vec_.push_back(top_.get()); }

  static LayerParameter Param(const std::vector<int>& shape) {
    LayerParameter param;
    param.set_name("param1");
    for (int dim : shape) param.mutable_parameter_param()->mutable_shape()->add_dim(dim);
    return param;
  }

  std::unique_ptr<Blob<Dtype>> top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ParameterLayerTest, TestDtypesAndDevices);

TYPED_TEST(ParameterLayerTest, StartsAsZerosOfTheShape) {
  using Dtype = typename TypeParam::Dtype;
  ParameterLayer<Dtype> layer(this->Param({2, 3}));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 1u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{2, 3}));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(this->top_->cpu_data()[i], Dtype(0)) << i;
}

TYPED_TEST(ParameterLayerTest, TopFollowsTheBlob) {
  using Dtype = typename TypeParam::Dtype;
  ParameterLayer<Dtype> layer(this->Param({4}));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 4; ++i) layer.blobs()[0]->mutable_cpu_data()[i] = Dtype(i) - 1;
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(this->top_->cpu_data()[i], Dtype(i) - 1) << i;
}

TYPED_TEST(ParameterLayerTest, UsesTheModelsValues) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->Param({1, 3});
  BlobProto* trained = param.add_blobs();
  trained->mutable_shape()->add_dim(1);
  trained->mutable_shape()->add_dim(3);
  for (float value : {0.5f, -1.5f, 2.0f}) trained->add_data(value);
  ParameterLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_->cpu_data()[0], Dtype(0.5));
  EXPECT_EQ(this->top_->cpu_data()[1], Dtype(-1.5));
  EXPECT_EQ(this->top_->cpu_data()[2], Dtype(2.0));
}

TYPED_TEST(ParameterLayerTest, BackwardAccumulatesIntoTheBlob) {
  using Dtype = typename TypeParam::Dtype;
  ParameterLayer<Dtype> layer(this->Param({3}));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  Blob<Dtype>& weights = *layer.blobs()[0];
  cpu_set(3, Dtype(1), weights.mutable_cpu_diff());
  for (int i = 0; i < 3; ++i) this->top_->mutable_cpu_diff()[i] = Dtype(i + 2);
  layer.Backward(this->top_vec_, {}, this->bottom_vec_);
  layer.Backward(this->top_vec_, {}, this->bottom_vec_);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(weights.cpu_diff()[i], Dtype(1 + 2 * (i + 2))) << i;

  layer.set_param_propagate_down(0, false);
  layer.Backward(this->top_vec_, {}, this->bottom_vec_);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(weights.cpu_diff()[i], Dtype(1 + 2 * (i + 2))) << i;
}

TYPED_TEST(ParameterLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->Param({2, 3});
  BlobProto* trained = param.add_blobs();
  trained->mutable_shape()->add_dim(2);
  trained->mutable_shape()->add_dim(3);
  for (int i = 0; i < 6; ++i) trained->add_data(0.25f * i - 0.5f);
  ParameterLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ParameterLayerTest, ModelBlobOfWrongShapeIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->Param({2, 3});
  BlobProto* trained = param.add_blobs();
  trained->mutable_shape()->add_dim(3);
  for (int i = 0; i < 3; ++i) trained->add_data(1);
  ParameterLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "a blob of shape 3 must not fill a parameter of shape 2 x 3";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("param1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Parameter"), std::string::npos) << e.what();
  }
}

TYPED_TEST(ParameterLayerTest, ZeroDimensionIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  ParameterLayer<Dtype> layer(this->Param({2, 0}));
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

TYPED_TEST(ParameterLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Parameter");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Parameter");
}

}  // namespace
}  // namespace crema
