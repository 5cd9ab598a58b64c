// BatchReindex: gathered items by hand (with a repeated and a missing index),
// the backward sum over repeats by hand and against finite differences, and
// refusal of indices out of range, fractional indices and non-1-D indices.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/batch_reindex_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class BatchReindexLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  BatchReindexLayerTest()
      : data_(new Blob<Dtype>(std::vector<int>{4, 2})),
        indices_(new Blob<Dtype>(std::vector<int>{4})),
        top_(new Blob<Dtype>()) {
    // Item n holds {10 n, 10 n + 1}.
    for (int i = 0; i < 8; ++i) data_->mutable_cpu_data()[i] = 10 * (i / 2) + i % 2;
    SetIndices({2, 0, 2, 1});  // item 2 twice, item 3 never
    bottom_vec_ = {data_.get(), indices_.get()};
    top_vec_ = {top_.get()};
  }

  void SetIndices(const std::vector<Dtype>& indices) {
    indices_->Reshape(std::vector<int>{static_cast<int>(indices.size())});
    std::copy(indices.begin(), indices.end(), indices_->mutable_cpu_data());
  }

  LayerParameter NamedParam() const {
    LayerParameter param;
    param.set_name("reindex1");
    return param;
  }

  void ExpectForwardThrowsNamingLayer(const std::string& detail) {
    BatchReindexLayer<Dtype> layer(NamedParam());
    try {
      layer.SetUp(bottom_vec_, top_vec_);
      layer.Forward(bottom_vec_, top_vec_);
      FAIL() << "must be refused: " << detail;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("reindex1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("BatchReindex"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(detail), std::string::npos) << e.what();
    }
  }

  std::unique_ptr<Blob<Dtype>> data_, indices_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(BatchReindexLayerTest, TestDtypesAndDevices);

TYPED_TEST(BatchReindexLayerTest, GathersItemsByHand) {
  using Dtype = typename TypeParam::Dtype;
  BatchReindexLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_->shape(), (std::vector<int>{4, 2}));
  const Dtype expected[] = {20, 21, 0, 1, 20, 21, 10, 11};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(this->top_->cpu_data()[i], expected[i]) << i;

  // Fewer indices than items shape the top by the indices.
  this->SetIndices({3});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_->shape(), (std::vector<int>{1, 2}));
  EXPECT_EQ(this->top_->cpu_data()[0], Dtype(30));
  EXPECT_EQ(this->top_->cpu_data()[1], Dtype(31));
}

TYPED_TEST(BatchReindexLayerTest, BackwardSumsRepeatsByHand) {
  using Dtype = typename TypeParam::Dtype;
  BatchReindexLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 8; ++i) this->top_->mutable_cpu_diff()[i] = i + 1;
  cpu_set(8, Dtype(100), this->data_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  // Item 0 from top row 1, item 1 from row 3, item 2 from rows 0 and 2, item 3 unused.
  const Dtype expected[] = {3, 4, 7, 8, 1 + 5, 2 + 6, 0, 0};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(this->data_->cpu_diff()[i], expected[i]) << i;
}

TYPED_TEST(BatchReindexLayerTest, GradientWithRepeatedIndex) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> data(std::vector<int>{3, 2, 3});
  Context::set_random_seed(1701);
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&data);
  this->SetIndices({2, 0, 2, 1, 2});
  std::vector<Blob<Dtype>*> bottom{&data, this->indices_.get()};
  BatchReindexLayer<Dtype> layer(this->NamedParam());
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom, this->top_vec_, 0);
}

TYPED_TEST(BatchReindexLayerTest, IndexOutOfRangeIsRefused) {
  this->SetIndices({0, 4});
  this->ExpectForwardThrowsNamingLayer("index 1 is 4");
  this->SetIndices({-1, 0});
  this->ExpectForwardThrowsNamingLayer("index 0 is -1");
}

TYPED_TEST(BatchReindexLayerTest, FractionalIndexIsRefused) {
  this->SetIndices({0, 1.5});
  this->ExpectForwardThrowsNamingLayer("index 1 is 1.5");
}

TYPED_TEST(BatchReindexLayerTest, IndicesMustBeOneDimensional) {
  this->indices_->Reshape(std::vector<int>{2, 2});
  this->ExpectForwardThrowsNamingLayer("1-D");
}

TYPED_TEST(BatchReindexLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("BatchReindex");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "BatchReindex");
}

}  // namespace
}  // namespace crema
