// Input: tops shaped from one shape or one per top, left alone without a
// shape, the caller's shape and values kept through Forward, and refusal of
// a shape count that fits neither rule.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/layers/input_layer.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class InputLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  InputLayerTest() : data_(new Blob<Dtype>()), label_(new Blob<Dtype>()) {
    top_vec_ = {data_.get(), label_.get()};
  }

  static void AddShape(LayerParameter* param, const std::vector<int>& dims) {
    BlobShape* shape = param->mutable_input_param()->add_shape();
    for (int dim : dims) shape->add_dim(dim);
  }

  static LayerParameter NamedParam() {
    LayerParameter param;
    param.set_name("input1");
    return param;
  }

  std::unique_ptr<Blob<Dtype>> data_, label_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(InputLayerTest, TestDtypesAndDevices);

TYPED_TEST(InputLayerTest, OneShapeForEveryTop) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {2, 3, 4});
  InputLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->data_->shape(), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(this->label_->shape(), (std::vector<int>{2, 3, 4}));
}

TYPED_TEST(InputLayerTest, OneShapePerTop) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {5, 1, 2, 2});
  this->AddShape(&param, {5});
  InputLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->data_->shape(), (std::vector<int>{5, 1, 2, 2}));
  EXPECT_EQ(this->label_->shape(), (std::vector<int>{5}));
}

TYPED_TEST(InputLayerTest, NoShapeLeavesTopsAlone) {
  using Dtype = typename TypeParam::Dtype;
  this->data_->Reshape(std::vector<int>{7, 2});
  this->label_->Reshape(std::vector<int>{7});
  InputLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->data_->shape(), (std::vector<int>{7, 2}));
  EXPECT_EQ(this->label_->shape(), (std::vector<int>{7}));
}

TYPED_TEST(InputLayerTest, ForwardKeepsTheCallersShapeAndValues) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {2, 3});
  InputLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->data_->Reshape(std::vector<int>{4, 3});
  for (int i = 0; i < 12; ++i) this->data_->mutable_cpu_data()[i] = Dtype(i);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->data_->shape(), (std::vector<int>{4, 3}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(this->data_->cpu_data()[i], Dtype(i)) << i;
}

TYPED_TEST(InputLayerTest, ShapeCountMismatchIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> third;
  std::vector<Blob<Dtype>*> three_tops{this->data_.get(), this->label_.get(), &third};
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {2});
  this->AddShape(&param, {3});
  InputLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, three_tops);
    FAIL() << "two shapes for three tops must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Input"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 shapes for 3 tops"), std::string::npos) << e.what();
  }
}

TYPED_TEST(InputLayerTest, BottomIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1});
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  InputLayer<Dtype> layer(this->NamedParam());
  EXPECT_THROW(layer.SetUp(bottom_vec, this->top_vec_), Error);
}

TYPED_TEST(InputLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Input");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Input");
}

// A size the blob refuses (beyond int) is named by the layer whose parameter
// gave it, and a zero size gives an empty top, not an abort.
TYPED_TEST(InputLayerTest, BlobErrorsNameTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  param.mutable_input_param()->add_shape()->add_dim(3000000000LL);
  InputLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "a size beyond int must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("layer 'input1' (Input): "), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("3000000000"), std::string::npos) << e.what();
  }
  LayerParameter empty = this->NamedParam();
  this->AddShape(&empty, {0, 3});
  InputLayer<Dtype> empty_layer(empty);
  empty_layer.SetUp(this->bottom_vec_, this->top_vec_);
  empty_layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->data_->count(), 0);
}

}  // namespace
}  // namespace crema
