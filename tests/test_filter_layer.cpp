// Filter: kept items by hand for a [N] and an [N, 1] selector, tops shaped
// for every item at set-up, an empty selection, the backward scatter (by hand
// and against finite differences for each data bottom), and refusal of
// mismatched shapes and blob counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/filter_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class FilterLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  FilterLayerTest()
      : data_(new Blob<Dtype>(std::vector<int>{4, 3, 2})),
        labels_(new Blob<Dtype>(std::vector<int>{4, 1})),
        selector_(new Blob<Dtype>(std::vector<int>{4})),
        top_data_(new Blob<Dtype>()),
        top_labels_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(data_.get());
    for (int n = 0; n < 4; ++n) labels_->mutable_cpu_data()[n] = 10 + n;
    SetSelector({0, 1, 0, 1});
    bottom_vec_ = {data_.get(), labels_.get(), selector_.get()};
    top_vec_ = {top_data_.get(), top_labels_.get()};
  }

  void SetSelector(const std::vector<Dtype>& keep) {
    std::copy(keep.begin(), keep.end(), selector_->mutable_cpu_data());
  }

  // The item `n` of `blob`, as values.
  static std::vector<Dtype> Item(const Blob<Dtype>& blob, int n, bool diff = false) {
    const int size = blob.count(1);
    const Dtype* values = (diff ? blob.cpu_diff() : blob.cpu_data()) + n * size;
    return std::vector<Dtype>(values, values + size);
  }

  LayerParameter NamedParam() const {
    LayerParameter param;
    param.set_name("filter1");
    return param;
  }

  void ExpectSetUpThrowsNamingLayer(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
    FilterLayer<Dtype> layer(NamedParam());
    try {
      layer.SetUp(bottom, top);
      FAIL() << "the configuration must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("filter1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("Filter"), std::string::npos) << e.what();
    }
  }

  std::unique_ptr<Blob<Dtype>> data_, labels_, selector_, top_data_, top_labels_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(FilterLayerTest, TestDtypesAndDevices);

TYPED_TEST(FilterLayerTest, KeepsSelectedItemsInOrder) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  // Set-up cannot know the selection yet: every item fits.
  EXPECT_EQ(this->top_data_->shape(), (std::vector<int>{4, 3, 2}));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_data_->shape(), (std::vector<int>{2, 3, 2}));
  EXPECT_EQ(this->top_labels_->shape(), (std::vector<int>{2, 1}));
  EXPECT_EQ(this->Item(*this->top_data_, 0), this->Item(*this->data_, 1));
  EXPECT_EQ(this->Item(*this->top_data_, 1), this->Item(*this->data_, 3));
  EXPECT_EQ(this->top_labels_->cpu_data()[0], Dtype(11));
  EXPECT_EQ(this->top_labels_->cpu_data()[1], Dtype(13));
}

TYPED_TEST(FilterLayerTest, SelectorOfShapeNByOne) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> selector(std::vector<int>{4, 1, 1});
  const Dtype keep[] = {1, 1, 0, 2};  // any non-zero value keeps the item
  std::copy(keep, keep + 4, selector.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom{this->labels_.get(), &selector};
  std::vector<Blob<Dtype>*> top{this->top_labels_.get()};
  FilterLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  ASSERT_EQ(this->top_labels_->shape(), (std::vector<int>{3, 1}));
  EXPECT_EQ(this->top_labels_->cpu_data()[0], Dtype(10));
  EXPECT_EQ(this->top_labels_->cpu_data()[1], Dtype(11));
  EXPECT_EQ(this->top_labels_->cpu_data()[2], Dtype(13));
}

TYPED_TEST(FilterLayerTest, NothingSelectedGivesEmptyTops) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->SetSelector({0, 0, 0, 0});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_data_->shape(), (std::vector<int>{0, 3, 2}));
  EXPECT_EQ(this->top_labels_->count(), 0);
  cpu_set(this->data_->count(), Dtype(5), this->data_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true, false, false}, this->bottom_vec_);
  for (int i = 0; i < this->data_->count(); ++i) EXPECT_EQ(this->data_->cpu_diff()[i], Dtype(0));
}

TYPED_TEST(FilterLayerTest, BackwardScattersAndZeroesTheRest) {
  using Dtype = typename TypeParam::Dtype;
  FilterLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  this->top_labels_->mutable_cpu_diff()[0] = 7;
  this->top_labels_->mutable_cpu_diff()[1] = -3;
  cpu_set(4, Dtype(100), this->labels_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {false, true, false}, this->bottom_vec_);
  const Dtype expected[] = {0, 7, 0, -3};
  for (int n = 0; n < 4; ++n) EXPECT_EQ(this->labels_->cpu_diff()[n], expected[n]) << n;
}

TYPED_TEST(FilterLayerTest, GradientEachDataBottom) {
  using Dtype = typename TypeParam::Dtype;
  this->SetSelector({1, 0, 1, 1});
  for (int checked : {0, 1}) {
    SCOPED_TRACE("bottom " + std::to_string(checked));
    FilterLayer<Dtype> layer(this->NamedParam());
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, checked);
  }
}

TYPED_TEST(FilterLayerTest, SelectorNotOfItemShapeIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> selector(std::vector<int>{4, 2});
  this->ExpectSetUpThrowsNamingLayer({this->data_.get(), &selector}, {this->top_data_.get()});
}

TYPED_TEST(FilterLayerTest, ItemCountMismatchIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> selector(std::vector<int>{3});
  this->ExpectSetUpThrowsNamingLayer({this->data_.get(), &selector}, {this->top_data_.get()});
}

TYPED_TEST(FilterLayerTest, TopCountMismatchIsRefused) {
  this->ExpectSetUpThrowsNamingLayer(this->bottom_vec_, {this->top_data_.get()});
}

TYPED_TEST(FilterLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Filter");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Filter");
}

}  // namespace
}  // namespace crema
