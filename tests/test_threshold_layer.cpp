// Threshold: forward values by hand (strictly greater than the threshold gives
// 1), backward writes zero gradients, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/threshold_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ThresholdLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ThresholdLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ThresholdLayerTest, TestDtypesAndDevices);

TYPED_TEST(ThresholdLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  ThresholdLayer<Dtype> layer(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, {-1, 0, 0.25, 2});
  const std::vector<Dtype> expected = {0, 0, 1, 1};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(top[i], expected[i]) << i;

  param.mutable_threshold_param()->set_threshold(0.5);
  ThresholdLayer<Dtype> half(param);
  const std::vector<Dtype> top_half = ForwardOnValues<Dtype>(&half, {-1, 0.25, 0.5, 0.75, 2});
  const std::vector<Dtype> expected_half = {0, 0, 0, 1, 1};
  for (size_t i = 0; i < expected_half.size(); ++i) EXPECT_EQ(top_half[i], expected_half[i]) << i;
}

TYPED_TEST(ThresholdLayerTest, ForwardOnRandomInput) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_threshold_param()->set_threshold(0.3);
  ThresholdLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->bottom_->count(); ++i) {
    EXPECT_EQ(this->top_->cpu_data()[i], this->bottom_->cpu_data()[i] > Dtype(0.3) ? 1 : 0) << i;
  }
}

TYPED_TEST(ThresholdLayerTest, BackwardGivesZeros) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  ThresholdLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int count = this->bottom_->count();
  cpu_set(count, Dtype(1), this->top_->mutable_cpu_diff());
  cpu_set(count, Dtype(7), this->bottom_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, std::vector<bool>{true}, this->bottom_vec_);
  for (int i = 0; i < count; ++i) EXPECT_EQ(this->bottom_->cpu_diff()[i], 0) << i;
}

TYPED_TEST(ThresholdLayerTest, WrongBlobCountNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("threshold3");
  ThresholdLayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> two_bottoms{this->bottom_.get(), this->bottom_.get()};
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, two_bottoms, this->top_vec_);
}

TYPED_TEST(ThresholdLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Threshold");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Threshold");
}

}  // namespace
}  // namespace crema
