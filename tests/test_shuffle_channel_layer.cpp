// ShuffleChannel: forward and backward values by hand on a [2, 6, 1, 2] blob
// (values checked against OpenCV 4.6's ShuffleChannel for groups 1, 2, 3),
// the gradient against finite differences, in place, refusals, every device.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "crema/layers/shuffle_channel_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ShuffleChannelLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Value (n * 6 + c) * 2 + s at image n, channel c, position s.
  ShuffleChannelLayerTest() : bottom_(new Blob<Dtype>(2, 6, 1, 2)), top_(new Blob<Dtype>()) {
    std::iota(bottom_->mutable_cpu_data(), bottom_->mutable_cpu_data() + bottom_->count(),
              Dtype(0));
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }

  std::vector<Dtype> Forward(Layer<Dtype>* layer) {
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    return std::vector<Dtype>(top_->cpu_data(), top_->cpu_data() + top_->count());
  }

  // The bottom gradient for a top gradient equal to the bottom's values.
  std::vector<Dtype> Backward(Layer<Dtype>* layer) {
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    cpu_copy(top_->count(), bottom_->cpu_data(), top_->mutable_cpu_diff());
    layer->Backward(top_vec_, std::vector<bool>{true}, bottom_vec_);
    return std::vector<Dtype>(bottom_->cpu_diff(), bottom_->cpu_diff() + bottom_->count());
  }

  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ShuffleChannelLayerTest, TestDtypesAndDevices);

LayerParameter ShuffleParam(int group) {
  LayerParameter param;
  param.set_name("shuffle1");
  param.set_type("ShuffleChannel");
  param.mutable_shuffle_channel_param()->set_group(group);
  return param;
}

// The values of a [2, 6, 1, 2] blob whose channels come from the given
// channels of the test's bottom, in each image.
template <typename Dtype>
std::vector<Dtype> ChannelsOfBottom(const std::vector<int>& channels) {
  std::vector<Dtype> values;
  for (int n = 0; n < 2; ++n) {
    for (int c : channels) {
      for (int s = 0; s < 2; ++s) values.push_back(Dtype((n * 6 + c) * 2 + s));
    }
  }
  return values;
}

TYPED_TEST(ShuffleChannelLayerTest, GroupOneIsIdentity) {
  using Dtype = typename TypeParam::Dtype;
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(1));
  EXPECT_EQ(this->Forward(&layer), ChannelsOfBottom<Dtype>({0, 1, 2, 3, 4, 5}));
}

TYPED_TEST(ShuffleChannelLayerTest, ForwardGroupTwoByHand) {
  using Dtype = typename TypeParam::Dtype;
  // Channels as (2, 3): rows {0, 1, 2} and {3, 4, 5}, read column by column.
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(2));
  EXPECT_EQ(this->Forward(&layer), ChannelsOfBottom<Dtype>({0, 3, 1, 4, 2, 5}));
}

TYPED_TEST(ShuffleChannelLayerTest, ForwardGroupThreeByHand) {
  using Dtype = typename TypeParam::Dtype;
  // Channels as (3, 2): rows {0, 1}, {2, 3}, {4, 5}, read column by column.
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(3));
  EXPECT_EQ(this->Forward(&layer), ChannelsOfBottom<Dtype>({0, 2, 4, 1, 3, 5}));
}

TYPED_TEST(ShuffleChannelLayerTest, BackwardGroupTwoByHand) {
  using Dtype = typename TypeParam::Dtype;
  // Bottom channel c went to top channel {0, 2, 4, 1, 3, 5}[c]; its gradient
  // comes back from there.
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(2));
  EXPECT_EQ(this->Backward(&layer), ChannelsOfBottom<Dtype>({0, 2, 4, 1, 3, 5}));
}

TYPED_TEST(ShuffleChannelLayerTest, BackwardGroupThreeByHand) {
  using Dtype = typename TypeParam::Dtype;
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(3));
  EXPECT_EQ(this->Backward(&layer), ChannelsOfBottom<Dtype>({0, 3, 1, 4, 2, 5}));
}

TYPED_TEST(ShuffleChannelLayerTest, TwoAxisBottom) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1, 4}), top;
  SetValues(&bottom, {10, 11, 12, 13});
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(2));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(std::vector<Dtype>(top.cpu_data(), top.cpu_data() + 4),
            (std::vector<Dtype>{10, 12, 11, 13}));
}

TYPED_TEST(ShuffleChannelLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  Blob<Dtype> bottom(2, 6, 2, 3), top;
  FillGaussian(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(3));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
}

TYPED_TEST(ShuffleChannelLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  ExpectInPlaceMatchesOutOfPlace<Dtype>(ShuffleParam(2), *this->bottom_);
}

TYPED_TEST(ShuffleChannelLayerTest, GroupZeroRefused) {
  using Dtype = typename TypeParam::Dtype;
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(0));
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_, "group must be positive");
}

TYPED_TEST(ShuffleChannelLayerTest, GroupNotDividingChannelsRefused) {
  using Dtype = typename TypeParam::Dtype;
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(4));
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_,
                          "group 4 must divide the 6 channels");
}

TYPED_TEST(ShuffleChannelLayerTest, BottomWithoutChannelAxisRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{6}), top;
  ShuffleChannelLayer<Dtype> layer(ShuffleParam(2));
  ExpectSetUpError<Dtype>(&layer, {&bottom}, {&top}, "needs a channel axis");
}

TYPED_TEST(ShuffleChannelLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(ShuffleParam(2))->type(), "ShuffleChannel");
}

}  // namespace
}  // namespace crema
