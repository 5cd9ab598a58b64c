// Bias: forward values by hand for a learned bias and one from bottom[1],
// the learned blob's shape and filler, gradients against finite differences
// (learned and from bottom[1], default axis and axis 0 with two axes), the
// accumulate-versus-overwrite convention, and configuration errors.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/bias_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class BiasLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  BiasLayerTest() : bottom_(new Blob<Dtype>(2, 3, 2, 2)), top_(new Blob<Dtype>()) {
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }

  // A bias operand of the given shape with gaussian values.
  std::unique_ptr<Blob<Dtype>> RandomBlob(const std::vector<int>& shape) {
    std::unique_ptr<Blob<Dtype>> blob(new Blob<Dtype>(shape));
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(blob.get());
    return blob;
  }

  // Expects that setting up a Bias layer named "bias3" throws an Error that
  // names it and contains fragment.
  void ExpectSetUpError(const LayerParameter& param, const std::vector<Blob<Dtype>*>& bottom,
                        const std::string& fragment) {
    LayerParameter named = param;
    named.set_name("bias3");
    BiasLayer<Dtype> layer(named);
    try {
      layer.SetUp(bottom, this->top_vec_);
      FAIL() << "expected an Error containing '" << fragment << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("bias3"), std::string::npos) << message;
      EXPECT_NE(message.find("Bias"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(BiasLayerTest, TestDtypesAndDevices);

TYPED_TEST(BiasLayerTest, ForwardLearnedByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 2}), top;
  for (int i = 0; i < bottom.count(); ++i) bottom.mutable_cpu_data()[i] = Dtype(i);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param;
  BiasLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  ASSERT_EQ(layer.blobs().size(), 1u);
  ASSERT_EQ(layer.blobs()[0]->shape(), std::vector<int>{3});
  const Dtype bias[] = {10, -20, 0.5};
  std::copy(bias, bias + 3, layer.blobs()[0]->mutable_cpu_data());
  layer.Forward(bottom_vec, top_vec);
  // x = 0..11 laid out [n][c][s]; y = x + bias[c].
  const Dtype expected[] = {10, 11, -18, -17, 4.5, 5.5, 16, 17, -12, -11, 10.5, 11.5};
  ASSERT_EQ(top.shape(), bottom.shape());
  for (int i = 0; i < top.count(); ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(BiasLayerTest, ForwardFromBottomAxisZeroByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 2}), bias(std::vector<int>{2, 3}), top;
  for (int i = 0; i < bottom.count(); ++i) bottom.mutable_cpu_data()[i] = Dtype(i);
  for (int i = 0; i < bias.count(); ++i) bias.mutable_cpu_data()[i] = Dtype(100 * (i + 1));
  std::vector<Blob<Dtype>*> bottom_vec{&bottom, &bias}, top_vec{&top};
  LayerParameter param;
  param.mutable_bias_param()->set_axis(0);
  BiasLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  EXPECT_TRUE(layer.blobs().empty());
  layer.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {100, 101, 202, 203, 304, 305, 406, 407, 508, 509, 610, 611};
  for (int i = 0; i < top.count(); ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(BiasLayerTest, ForwardScalarFromBottomIgnoresAxis) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> scalar{std::vector<int>{}};
  scalar.mutable_cpu_data()[0] = Dtype(2.5);
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), &scalar};
  LayerParameter param;
  param.mutable_bias_param()->set_axis(3);
  BiasLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, this->top_vec_);
  layer.Forward(bottom_vec, this->top_vec_);
  for (int i = 0; i < this->top_->count(); ++i) {
    EXPECT_EQ(this->top_->cpu_data()[i], this->bottom_->cpu_data()[i] + Dtype(2.5)) << i;
  }
}

TYPED_TEST(BiasLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_bias_param()->mutable_filler()->set_type("gaussian");
  BiasLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> in_place;
  in_place.CopyFrom(*this->bottom_, false, true);
  std::vector<Blob<Dtype>*> in_place_vec{&in_place};
  layer.Forward(in_place_vec, in_place_vec);
  for (int i = 0; i < in_place.count(); ++i) {
    EXPECT_EQ(in_place.cpu_data()[i], this->top_->cpu_data()[i]) << i;
  }
}

TYPED_TEST(BiasLayerTest, LearnedShapeFollowsAxisAndNumAxes) {
  using Dtype = typename TypeParam::Dtype;
  struct Case {
    int axis, num_axes;
    std::vector<int> shape;
  };
  const std::vector<Case> cases = {
      {1, 1, {3}}, {0, 2, {2, 3}}, {1, -1, {3, 2, 2}}, {-2, 2, {2, 2}}, {2, 0, {}}};
  for (const Case& c : cases) {
    LayerParameter param;
    param.mutable_bias_param()->set_axis(c.axis);
    param.mutable_bias_param()->set_num_axes(c.num_axes);
    BiasLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    ASSERT_EQ(layer.blobs().size(), 1u);
    EXPECT_EQ(layer.blobs()[0]->shape(), c.shape)
        << "axis " << c.axis << " num_axes " << c.num_axes;
    // The default filler is the constant 0.
    EXPECT_EQ(layer.blobs()[0]->asum_data(), Dtype(0));
  }
}

TYPED_TEST(BiasLayerTest, FillerIsUsed) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_bias_param()->mutable_filler()->set_value(0.25);
  BiasLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(layer.blobs()[0]->cpu_data()[i], Dtype(0.25));
}

TYPED_TEST(BiasLayerTest, GradientLearned) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_bias_param()->mutable_filler()->set_type("gaussian");
  BiasLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(BiasLayerTest, GradientLearnedAxisZeroTwoAxes) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_bias_param()->set_axis(0);
  param.mutable_bias_param()->set_num_axes(2);
  param.mutable_bias_param()->mutable_filler()->set_type("gaussian");
  BiasLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(BiasLayerTest, GradientFromBottom) {
  using Dtype = typename TypeParam::Dtype;
  auto bias = this->RandomBlob({3, 2});
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), bias.get()};
  LayerParameter param;
  BiasLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->top_vec_);
}

TYPED_TEST(BiasLayerTest, GradientFromBottomAxisZero) {
  using Dtype = typename TypeParam::Dtype;
  auto bias = this->RandomBlob({2, 3});
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), bias.get()};
  LayerParameter param;
  param.mutable_bias_param()->set_axis(0);
  BiasLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->top_vec_);
}

// The learned bias adds to its diff (iter_size accumulation); bottom[1]'s
// diff is overwritten, whatever it held.
TYPED_TEST(BiasLayerTest, LearnedDiffAccumulatesBottomDiffOverwritten) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  BiasLayer<Dtype> learned(param);
  learned.SetUp(this->bottom_vec_, this->top_vec_);
  learned.Forward(this->bottom_vec_, this->top_vec_);
  cpu_set(this->top_->count(), Dtype(1), this->top_->mutable_cpu_diff());
  Blob<Dtype>& bias_blob = *learned.blobs()[0];
  cpu_set(bias_blob.count(), Dtype(5), bias_blob.mutable_cpu_diff());
  learned.Backward(this->top_vec_, {true}, this->bottom_vec_);
  // Each channel sums 2 images x 4 positions of ones.
  for (int c = 0; c < 3; ++c) EXPECT_EQ(bias_blob.cpu_diff()[c], Dtype(5 + 8)) << c;

  auto bias = this->RandomBlob({3});
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), bias.get()};
  BiasLayer<Dtype> from_bottom(param);
  from_bottom.SetUp(bottom_vec, this->top_vec_);
  from_bottom.Forward(bottom_vec, this->top_vec_);
  cpu_set(this->top_->count(), Dtype(1), this->top_->mutable_cpu_diff());
  cpu_set(3, Dtype(5), bias->mutable_cpu_diff());
  from_bottom.Backward(this->top_vec_, {true, true}, bottom_vec);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(bias->cpu_diff()[c], Dtype(8)) << c;
  for (int i = 0; i < this->bottom_->count(); ++i) {
    EXPECT_EQ(this->bottom_->cpu_diff()[i], Dtype(1)) << i;
  }
}

TYPED_TEST(BiasLayerTest, ShapeMismatchWithBottomThrows) {
  auto bias = this->RandomBlob({4});
  this->ExpectSetUpError(LayerParameter(), {this->bottom_.get(), bias.get()}, "shape");
  auto too_long = this->RandomBlob({3, 2, 2, 1});
  this->ExpectSetUpError(LayerParameter(), {this->bottom_.get(), too_long.get()}, "shape");
}

TYPED_TEST(BiasLayerTest, AxisOutOfRangeThrows) {
  LayerParameter param;
  param.mutable_bias_param()->set_axis(4);
  this->ExpectSetUpError(param, this->bottom_vec_, "axis 4");
  param.mutable_bias_param()->set_axis(-5);
  auto bias = this->RandomBlob({3});
  this->ExpectSetUpError(param, {this->bottom_.get(), bias.get()}, "axis -5");
}

TYPED_TEST(BiasLayerTest, BadNumAxesThrows) {
  LayerParameter param;
  param.mutable_bias_param()->set_axis(2);
  param.mutable_bias_param()->set_num_axes(3);
  this->ExpectSetUpError(param, this->bottom_vec_, "num_axes 3");
  param.mutable_bias_param()->set_num_axes(-2);
  this->ExpectSetUpError(param, this->bottom_vec_, "num_axes");
}

TYPED_TEST(BiasLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Bias");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Bias");
}

}  // namespace
}  // namespace crema
