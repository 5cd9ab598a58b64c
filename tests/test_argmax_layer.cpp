// ArgMax: indices and values by hand for top_k 1 and 3, with and without
// out_max_val, over whole items and along an axis (positive and negative),
// ties going to the lower index, Caffe's top shapes, and refusal of a top_k
// larger than the searched values or an axis out of range.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crema/layers/argmax_layer.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ArgMaxLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ArgMaxLayerTest()
      : items_(new Blob<Dtype>(std::vector<int>{2, 5})),
        volume_(new Blob<Dtype>(std::vector<int>{2, 3, 2})),
        top_(new Blob<Dtype>()) {
    // Item 0 ties at indices 1 and 2; item 1 ties three ways.
    const Dtype items[] = {1, 3, 3, -1, 2, /**/ 0, -2, 5, 5, 5};
    std::copy(items, items + 10, items_->mutable_cpu_data());
    // Laid out [n][c][w].
    const Dtype volume[] = {1, 6, 4, 2, 3, 5, /**/ 0, -1, -3, -1, 7, -2};
    std::copy(volume, volume + 12, volume_->mutable_cpu_data());
    top_vec_.push_back(top_.get());
  }

  // Runs an ArgMax layer on `bottom` and returns the top's values.
  std::vector<Dtype> Run(const LayerParameter& param, Blob<Dtype>* bottom) {
    std::vector<Blob<Dtype>*> bottom_vec{bottom};
    ArgMaxLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec, top_vec_);
    layer.Forward(bottom_vec, top_vec_);
    return std::vector<Dtype>(top_->cpu_data(), top_->cpu_data() + top_->count());
  }

  static LayerParameter Param(int top_k, bool out_max_val) {
    LayerParameter param;
    param.set_name("argmax1");
    param.mutable_argmax_param()->set_top_k(top_k);
    param.mutable_argmax_param()->set_out_max_val(out_max_val);
    return param;
  }

  void ExpectThrowsNamingLayer(const LayerParameter& param, Blob<Dtype>* bottom,
                               const std::string& detail) {
    std::vector<Blob<Dtype>*> bottom_vec{bottom};
    ArgMaxLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom_vec, top_vec_);
      FAIL() << "must be refused: " << detail;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("argmax1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("ArgMax"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(detail), std::string::npos) << e.what();
    }
  }

  std::unique_ptr<Blob<Dtype>> items_, volume_, top_;
  std::vector<Blob<Dtype>*> top_vec_;
};
TYPED_TEST_SUITE(ArgMaxLayerTest, TestDtypesAndDevices);

TYPED_TEST(ArgMaxLayerTest, TopOneIndexPerItem) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_EQ(this->Run(this->Param(1, false), this->items_.get()), (std::vector<Dtype>{1, 2}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 1, 1}));
}

TYPED_TEST(ArgMaxLayerTest, TopOneWithValue) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_EQ(this->Run(this->Param(1, true), this->items_.get()),
            (std::vector<Dtype>{1, 3, /**/ 2, 5}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 2, 1}));
}

TYPED_TEST(ArgMaxLayerTest, TopThreeIndices) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_EQ(this->Run(this->Param(3, false), this->items_.get()),
            (std::vector<Dtype>{1, 2, 4, /**/ 2, 3, 4}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 1, 3}));
}

TYPED_TEST(ArgMaxLayerTest, TopThreeIndicesThenValues) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_EQ(this->Run(this->Param(3, true), this->items_.get()),
            (std::vector<Dtype>{1, 2, 4, 3, 3, 2, /**/ 2, 3, 4, 5, 5, 5}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 2, 3}));
}

TYPED_TEST(ArgMaxLayerTest, FourAxisBottomKeepsCaffesTopShape) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(2, 5, 1, 1);
  std::copy(this->items_->cpu_data(), this->items_->cpu_data() + 10, bottom.mutable_cpu_data());
  EXPECT_EQ(this->Run(this->Param(2, false), &bottom), (std::vector<Dtype>{1, 2, /**/ 2, 3}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 1, 2, 1}));
}

TYPED_TEST(ArgMaxLayerTest, AlongAxisIndices) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->Param(1, false);
  param.mutable_argmax_param()->set_axis(1);
  // Per (n, w): n0w0 {1,4,3}, n0w1 {6,2,5}, n1w0 {0,-3,7}, n1w1 {-1,-1,-2} (a tie).
  EXPECT_EQ(this->Run(param, this->volume_.get()), (std::vector<Dtype>{1, 0, 2, 0}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 1, 2}));

  param.mutable_argmax_param()->set_top_k(2);
  // Laid out [n][k][w].
  EXPECT_EQ(this->Run(param, this->volume_.get()), (std::vector<Dtype>{1, 0, 2, 2, 2, 0, 0, 1}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 2, 2}));
}

TYPED_TEST(ArgMaxLayerTest, AlongAxisValues) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->Param(1, true);
  param.mutable_argmax_param()->set_axis(1);
  EXPECT_EQ(this->Run(param, this->volume_.get()), (std::vector<Dtype>{4, 6, 7, -1}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 1, 2}));

  param.mutable_argmax_param()->set_top_k(3);
  EXPECT_EQ(this->Run(param, this->volume_.get()),
            (std::vector<Dtype>{4, 6, 3, 5, 1, 2, /**/ 7, -1, 0, -1, -3, -2}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 3, 2}));
}

TYPED_TEST(ArgMaxLayerTest, AlongNegativeAxis) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->Param(1, false);
  param.mutable_argmax_param()->set_axis(-1);
  EXPECT_EQ(this->Run(param, this->volume_.get()), (std::vector<Dtype>{1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 3, 1}));
}

TYPED_TEST(ArgMaxLayerTest, TopKLargerThanItemIsRefused) {
  this->ExpectThrowsNamingLayer(this->Param(6, false), this->items_.get(), "top_k");
}

TYPED_TEST(ArgMaxLayerTest, TopKLargerThanAxisIsRefused) {
  LayerParameter param = this->Param(3, false);
  param.mutable_argmax_param()->set_axis(2);
  this->ExpectThrowsNamingLayer(param, this->volume_.get(), "top_k");
}

TYPED_TEST(ArgMaxLayerTest, AxisOutOfRangeIsRefused) {
  LayerParameter param = this->Param(1, false);
  param.mutable_argmax_param()->set_axis(3);
  this->ExpectThrowsNamingLayer(param, this->volume_.get(), "axis");
  param.mutable_argmax_param()->set_axis(-4);
  this->ExpectThrowsNamingLayer(param, this->volume_.get(), "axis");
}

TYPED_TEST(ArgMaxLayerTest, TopKZeroIsRefused) {
  this->ExpectThrowsNamingLayer(this->Param(0, false), this->items_.get(), "top_k");
}

TYPED_TEST(ArgMaxLayerTest, OffersNoGradient) {
  using Dtype = typename TypeParam::Dtype;
  ArgMaxLayer<Dtype> layer(this->Param(1, false));
  EXPECT_FALSE(layer.AllowForceBackward(0));
}

}  // namespace
}  // namespace crema
