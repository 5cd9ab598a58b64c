// DummyData: zeros by default, constant fillers applied once, random fillers
// drawn again on every Forward, one filler per top, the legacy 4-D shape
// fields, sharing between solvers, and refusal of shape or filler counts that
// fit no top count and of mixing shape with the legacy fields.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/data/dummy_data_layer.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class DummyDataLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  DummyDataLayerTest() : first_(new Blob<Dtype>()), second_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    top_vec_ = {first_.get(), second_.get()};
  }

  static LayerParameter NamedParam() {
    LayerParameter param;
    param.set_name("dummy1");
    return param;
  }
  static void AddShape(LayerParameter* param, const std::vector<int>& dims) {
    BlobShape* shape = param->mutable_dummy_data_param()->add_shape();
    for (int dim : dims) shape->add_dim(dim);
  }
  static FillerParameter* AddFiller(LayerParameter* param, const std::string& type) {
    FillerParameter* filler = param->mutable_dummy_data_param()->add_data_filler();
    filler->set_type(type);
    return filler;
  }

  static std::vector<Dtype> Values(const Blob<Dtype>& blob) {
    return std::vector<Dtype>(blob.cpu_data(), blob.cpu_data() + blob.count());
  }
  static void ExpectAll(const Blob<Dtype>& blob, Dtype value) {
    for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(blob.cpu_data()[i], value) << i;
  }

  void ExpectSetUpThrowsNamingLayer(const LayerParameter& param, const std::string& detail) {
    DummyDataLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom_vec_, top_vec_);
      FAIL() << "must be refused: " << detail;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("dummy1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("DummyData"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(detail), std::string::npos) << e.what();
    }
  }

  std::unique_ptr<Blob<Dtype>> first_, second_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(DummyDataLayerTest, TestDtypesAndDevices);

TYPED_TEST(DummyDataLayerTest, ZerosByDefault) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {2, 3});
  DummyDataLayer<Dtype> layer(param);
  this->first_->Reshape(std::vector<int>{6});
  cpu_set(6, Dtype(9), this->first_->mutable_cpu_data());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->first_->shape(), (std::vector<int>{2, 3}));
  EXPECT_EQ(this->second_->shape(), (std::vector<int>{2, 3}));
  this->ExpectAll(*this->first_, 0);
  this->ExpectAll(*this->second_, 0);
}

TYPED_TEST(DummyDataLayerTest, ConstantFillsOnceAtSetUp) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {2, 3});
  this->AddShape(&param, {4});
  this->AddFiller(&param, "constant")->set_value(7);
  DummyDataLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->first_->shape(), (std::vector<int>{2, 3}));
  EXPECT_EQ(this->second_->shape(), (std::vector<int>{4}));
  this->ExpectAll(*this->first_, 7);
  this->ExpectAll(*this->second_, 7);
  // Constant tops are not refilled: a change made after set-up survives.
  this->first_->mutable_cpu_data()[0] = -1;
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->first_->cpu_data()[0], Dtype(-1));
}

TYPED_TEST(DummyDataLayerTest, GaussianRefillsEveryForward) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {3, 4});
  FillerParameter* gaussian = this->AddFiller(&param, "gaussian");
  gaussian->set_mean(10);
  gaussian->set_std(1);
  DummyDataLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const std::vector<Dtype> first_pass = this->Values(*this->first_);
  double sum = 0;
  for (Dtype value : first_pass) sum += value;
  EXPECT_NEAR(sum / first_pass.size(), 10, 1.5);
  EXPECT_NE(first_pass, this->Values(*this->second_));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NE(first_pass, this->Values(*this->first_));
}

TYPED_TEST(DummyDataLayerTest, OneFillerPerTop) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {5});
  this->AddFiller(&param, "constant")->set_value(3);
  FillerParameter* uniform = this->AddFiller(&param, "uniform");
  uniform->set_min(1);
  uniform->set_max(2);
  DummyDataLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectAll(*this->first_, 3);
  const std::vector<Dtype> first_pass = this->Values(*this->second_);
  for (Dtype value : first_pass) {
    EXPECT_GE(value, Dtype(1));
    EXPECT_LE(value, Dtype(2));
  }
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NE(first_pass, this->Values(*this->second_));
  this->ExpectAll(*this->first_, 3);
}

TYPED_TEST(DummyDataLayerTest, LegacyShapeFields) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->NamedParam();
  DummyDataParameter* dummy = param.mutable_dummy_data_param();
  dummy->add_num(2);
  dummy->add_num(5);
  dummy->add_channels(3);
  dummy->add_height(4);
  dummy->add_height(1);
  dummy->add_width(1);
  DummyDataLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->first_->shape(), (std::vector<int>{2, 3, 4, 1}));
  EXPECT_EQ(this->second_->shape(), (std::vector<int>{5, 3, 1, 1}));
}

TYPED_TEST(DummyDataLayerTest, SharedBetweenSolvers) {
  using Dtype = typename TypeParam::Dtype;
  DummyDataLayer<Dtype> layer(this->NamedParam());
  EXPECT_TRUE(layer.ShareInParallel());
}

TYPED_TEST(DummyDataLayerTest, ShapeCountMismatchIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> third;
  this->top_vec_.push_back(&third);
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {2});
  this->AddShape(&param, {3});
  this->ExpectSetUpThrowsNamingLayer(param, "shape is given 2 times for 3 tops");
}

TYPED_TEST(DummyDataLayerTest, MissingShapeIsRefused) {
  this->ExpectSetUpThrowsNamingLayer(this->NamedParam(), "shape is given 0 times");
}

TYPED_TEST(DummyDataLayerTest, FillerCountMismatchIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> third;
  this->top_vec_.push_back(&third);
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {2});
  this->AddFiller(&param, "constant");
  this->AddFiller(&param, "gaussian");
  this->ExpectSetUpThrowsNamingLayer(param, "data_filler is given 2 times for 3 tops");
}

TYPED_TEST(DummyDataLayerTest, ShapeAndLegacyFieldsTogetherAreRefused) {
  LayerParameter param = this->NamedParam();
  this->AddShape(&param, {2});
  param.mutable_dummy_data_param()->add_num(2);
  this->ExpectSetUpThrowsNamingLayer(param, "both shape and the legacy");
}

TYPED_TEST(DummyDataLayerTest, IncompleteLegacyFieldsAreRefused) {
  LayerParameter param = this->NamedParam();
  param.mutable_dummy_data_param()->add_num(2);
  param.mutable_dummy_data_param()->add_channels(3);
  param.mutable_dummy_data_param()->add_height(4);
  this->ExpectSetUpThrowsNamingLayer(param, "width is given 0 times");
}

// The legacy fields are unsigned: 3000000000 was a negative size, reported
// by the blob without the layer or the field.
TYPED_TEST(DummyDataLayerTest, LegacySizeBeyondIntIsRefused) {
  LayerParameter param = this->NamedParam();
  DummyDataParameter* dummy = param.mutable_dummy_data_param();
  dummy->add_num(2);
  dummy->add_channels(3000000000u);
  dummy->add_height(1);
  dummy->add_width(1);
  this->ExpectSetUpThrowsNamingLayer(param, "channels for top 0 is 3000000000");
}

TYPED_TEST(DummyDataLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("DummyData");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "DummyData");
}

}  // namespace
}  // namespace crema
