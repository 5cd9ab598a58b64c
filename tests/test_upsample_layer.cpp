// Upsample: forward and backward by hand, output sizes (scale, scale_h /
// scale_w, pad_out, upsample_h / upsample_w), MAX Pooling with its mask top
// followed by Upsample putting each maximum back at its place, gradients
// against finite differences, refusal of bad scales, masks and sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/pooling_layer.hpp"
#include "crema/layers/upsample_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class UpsampleLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  UpsampleLayerTest()
      : data_(new Blob<Dtype>(1, 1, 2, 2)),
        mask_(new Blob<Dtype>(1, 1, 2, 2)),
        top_(new Blob<Dtype>()) {
    SetValues(data_.get(), {1, 2, 3, 4});
    // Indices into a 4 x 4 plane: one in each 2 x 2 window.
    SetValues(mask_.get(), {0, 3, 9, 14});
    bottom_vec_ = {data_.get(), mask_.get()};
    top_vec_ = {top_.get()};
  }

  // Expects SetUp on data and mask of the given shapes to refuse param.
  void ExpectRefused(const LayerParameter& param, const std::vector<int>& data_shape,
                     const std::vector<int>& mask_shape) {
    Blob<Dtype> data(data_shape), mask(mask_shape);
    std::vector<Blob<Dtype>*> bottom_vec{&data, &mask};
    UpsampleLayer<Dtype> layer(param);
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec, top_vec_);
  }

  // The shape of the top for a 2 x 3 plane.
  std::vector<int> TopShape(const LayerParameter& param) {
    Blob<Dtype> data(2, 3, 2, 3), mask(2, 3, 2, 3);
    std::vector<Blob<Dtype>*> bottom_vec{&data, &mask};
    UpsampleLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec, top_vec_);
    return top_->shape();
  }

  // The message Forward throws when the mask holds value at element 2.
  std::string ForwardErrorWithMaskValue(Dtype value) {
    UpsampleLayer<Dtype> layer(UpsampleParam());
    layer.SetUp(bottom_vec_, top_vec_);
    mask_->mutable_cpu_data()[2] = value;
    return ErrorMessageOf([&] { layer.Forward(bottom_vec_, top_vec_); });
  }

  static LayerParameter UpsampleParam() {
    LayerParameter param;
    param.set_name("unpool1");
    param.set_type("Upsample");
    return param;
  }

  std::unique_ptr<Blob<Dtype>> data_, mask_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(UpsampleLayerTest, TestDtypesAndDevices);

TYPED_TEST(UpsampleLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  UpsampleLayer<Dtype> layer(this->UpsampleParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 4, 4}));
  const std::vector<Dtype> expected{1, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0};
  EXPECT_EQ(std::vector<Dtype>(this->top_->cpu_data(), this->top_->cpu_data() + 16), expected);
}

TYPED_TEST(UpsampleLayerTest, ForwardClearsThePreviousTop) {
  using Dtype = typename TypeParam::Dtype;
  UpsampleLayer<Dtype> layer(this->UpsampleParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  SetValues(this->mask_.get(), {1, 2, 4, 5});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const std::vector<Dtype> expected{0, 1, 2, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<Dtype>(this->top_->cpu_data(), this->top_->cpu_data() + 16), expected);
}

TYPED_TEST(UpsampleLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  UpsampleLayer<Dtype> layer(this->UpsampleParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 16; ++i) this->top_->mutable_cpu_diff()[i] = 10 * i;
  cpu_set(4, Dtype(-1), this->mask_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true, true}, this->bottom_vec_);
  const Dtype* diff = this->data_->cpu_diff();
  EXPECT_EQ(std::vector<Dtype>(diff, diff + 4), (std::vector<Dtype>{0, 30, 90, 140}));
  // The mask takes no gradient: its diff is left as it was.
  const Dtype* mask_diff = this->mask_->cpu_diff();
  EXPECT_EQ(std::vector<Dtype>(mask_diff, mask_diff + 4), (std::vector<Dtype>(4, -1)));
}

TYPED_TEST(UpsampleLayerTest, OutputSizes) {
  LayerParameter param = this->UpsampleParam();
  EXPECT_EQ(this->TopShape(param), (std::vector<int>{2, 3, 4, 6}));
  param.mutable_upsample_param()->set_scale(3);
  EXPECT_EQ(this->TopShape(param), (std::vector<int>{2, 3, 6, 9}));
  param.mutable_upsample_param()->set_scale_w(2);
  EXPECT_EQ(this->TopShape(param), (std::vector<int>{2, 3, 6, 6}));
  param.mutable_upsample_param()->set_scale_h(2);
  param.mutable_upsample_param()->set_pad_out_h(true);
  EXPECT_EQ(this->TopShape(param), (std::vector<int>{2, 3, 3, 6}));
  param.mutable_upsample_param()->set_pad_out_w(true);
  EXPECT_EQ(this->TopShape(param), (std::vector<int>{2, 3, 3, 5}));
  param.mutable_upsample_param()->set_upsample_h(7);
  param.mutable_upsample_param()->set_upsample_w(5);
  EXPECT_EQ(this->TopShape(param), (std::vector<int>{2, 3, 7, 5}));
  // upsample_h without upsample_w is ignored, as on the fork.
  LayerParameter height_only = this->UpsampleParam();
  height_only.mutable_upsample_param()->set_upsample_h(7);
  EXPECT_EQ(this->TopShape(height_only), (std::vector<int>{2, 3, 4, 6}));
}

// MAX pooling with its mask top, then Upsample to the pooled input's size:
// each window's maximum is back at its place and every other value is 0.
template <typename Dtype>
void ExpectUnpoolingRestoresMaxima(int height, int width, const LayerParameter& upsample_param) {
  Context::set_random_seed(1701);
  Blob<Dtype> input(2, 3, height, width), pooled, mask, unpooled;
  // Distinct values, so each window has one maximum.
  std::vector<int> order(input.count());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(1701));
  for (int i = 0; i < input.count(); ++i) input.mutable_cpu_data()[i] = Dtype(order[i]) - 50;
  LayerParameter pooling_param;
  pooling_param.set_name("pool1");
  pooling_param.mutable_pooling_param()->set_pool(PoolingParameter::MAX);
  pooling_param.mutable_pooling_param()->set_kernel_size(2);
  pooling_param.mutable_pooling_param()->set_stride(2);
  PoolingLayer<Dtype> pooling(pooling_param);
  std::vector<Blob<Dtype>*> input_vec{&input}, pooled_vec{&pooled, &mask};
  pooling.SetUp(input_vec, pooled_vec);
  pooling.Forward(input_vec, pooled_vec);
  UpsampleLayer<Dtype> upsample(upsample_param);
  std::vector<Blob<Dtype>*> unpool_bottom{&pooled, &mask}, unpool_top{&unpooled};
  upsample.SetUp(unpool_bottom, unpool_top);
  upsample.Forward(unpool_bottom, unpool_top);
  ASSERT_EQ(unpooled.shape(), input.shape());
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int h = 0; h < height; ++h) {
        for (int w = 0; w < width; ++w) {
          // The window of (h, w) and its maximum.
          Dtype best = -1e9;
          for (int y = h / 2 * 2; y < std::min(h / 2 * 2 + 2, height); ++y) {
            for (int x = w / 2 * 2; x < std::min(w / 2 * 2 + 2, width); ++x) {
              best = std::max(best, input.data_at(n, c, y, x));
            }
          }
          const Dtype value = input.data_at(n, c, h, w);
          EXPECT_EQ(unpooled.data_at(n, c, h, w), value == best ? value : Dtype(0))
              << n << " " << c << " " << h << " " << w;
        }
      }
    }
  }
}

TYPED_TEST(UpsampleLayerTest, UnpoolingRestoresMaxima) {
  ExpectUnpoolingRestoresMaxima<typename TypeParam::Dtype>(4, 6, this->UpsampleParam());
}

TYPED_TEST(UpsampleLayerTest, UnpoolingOddSizeWithPadOut) {
  // Pooling 5 x 7 rounds up to 3 x 4; 3 * 2 - 1 = 5 and 4 * 2 - 1 = 7.
  LayerParameter param = this->UpsampleParam();
  param.mutable_upsample_param()->set_pad_out_h(true);
  param.mutable_upsample_param()->set_pad_out_w(true);
  ExpectUnpoolingRestoresMaxima<typename TypeParam::Dtype>(5, 7, param);
}

TYPED_TEST(UpsampleLayerTest, UnpoolingOddSizeWithExplicitSize) {
  LayerParameter param = this->UpsampleParam();
  param.mutable_upsample_param()->set_upsample_h(5);
  param.mutable_upsample_param()->set_upsample_w(7);
  ExpectUnpoolingRestoresMaxima<typename TypeParam::Dtype>(5, 7, param);
}

TYPED_TEST(UpsampleLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  Blob<Dtype> data(2, 3, 3, 2), mask(2, 3, 3, 2);
  FillGaussian(&data);
  // Distinct indices into each 6 x 4 plane.
  std::mt19937 rng(1701);
  for (int p = 0; p < 6; ++p) {
    std::vector<int> index(24);
    std::iota(index.begin(), index.end(), 0);
    std::shuffle(index.begin(), index.end(), rng);
    for (int i = 0; i < 6; ++i) mask.mutable_cpu_data()[p * 6 + i] = index[i];
  }
  std::vector<Blob<Dtype>*> bottom_vec{&data, &mask};
  UpsampleLayer<Dtype> layer(this->UpsampleParam());
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->top_vec_, 0);
}

TYPED_TEST(UpsampleLayerTest, ZeroScaleRefused) {
  LayerParameter param = this->UpsampleParam();
  param.mutable_upsample_param()->set_scale(0);
  this->ExpectRefused(param, {1, 1, 2, 2}, {1, 1, 2, 2});
  LayerParameter h = this->UpsampleParam();
  h.mutable_upsample_param()->set_scale_h(0);
  this->ExpectRefused(h, {1, 1, 2, 2}, {1, 1, 2, 2});
}

TYPED_TEST(UpsampleLayerTest, MaskOfWrongShapeRefused) {
  this->ExpectRefused(this->UpsampleParam(), {1, 1, 2, 2}, {1, 1, 2, 3});
  this->ExpectRefused(this->UpsampleParam(), {1, 2, 2, 2}, {1, 1, 2, 2});
}

TYPED_TEST(UpsampleLayerTest, NonPlanarDataRefused) {
  this->ExpectRefused(this->UpsampleParam(), {2, 2}, {2, 2});
}

TYPED_TEST(UpsampleLayerTest, OutputSmallerThanBottomRefused) {
  LayerParameter param = this->UpsampleParam();
  param.mutable_upsample_param()->set_upsample_h(1);
  param.mutable_upsample_param()->set_upsample_w(4);
  this->ExpectRefused(param, {1, 1, 2, 2}, {1, 1, 2, 2});
  // Scale 1 with pad_out leaves H - 1.
  LayerParameter padded = this->UpsampleParam();
  padded.mutable_upsample_param()->set_scale(1);
  padded.mutable_upsample_param()->set_pad_out_w(true);
  this->ExpectRefused(padded, {1, 1, 2, 2}, {1, 1, 2, 2});
}

TYPED_TEST(UpsampleLayerTest, HugeOutputRefused) {
  LayerParameter param = this->UpsampleParam();
  param.mutable_upsample_param()->set_scale(UINT_MAX);
  this->ExpectRefused(param, {1, 1, 2, 2}, {1, 1, 2, 2});
}

TYPED_TEST(UpsampleLayerTest, MaskValueOutsidePlaneRefusedInForward) {
  const std::string message = this->ForwardErrorWithMaskValue(16);
  EXPECT_NE(message.find("unpool1"), std::string::npos) << message;
  EXPECT_NE(message.find("Upsample"), std::string::npos) << message;
  EXPECT_NE(message.find("mask value 16"), std::string::npos) << message;
  EXPECT_NE(this->ForwardErrorWithMaskValue(-1).find("mask value -1"), std::string::npos);
}

TYPED_TEST(UpsampleLayerTest, NonIntegerMaskValueRefusedInForward) {
  const std::string message = this->ForwardErrorWithMaskValue(2.5);
  EXPECT_NE(message.find("unpool1"), std::string::npos) << message;
  EXPECT_NE(message.find("mask value 2.5"), std::string::npos) << message;
}

TYPED_TEST(UpsampleLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Upsample");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Upsample");
}

}  // namespace
}  // namespace crema
