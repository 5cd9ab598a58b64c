// Scale: forward values by hand (learned scale, scale from bottom[1], with a
// bias), the learned blobs' order, shapes and fillers, gradients against
// finite differences (learned, from bottom[1], with bias), in-place backward
// against out-of-place, the accumulate-versus-overwrite convention, and
// configuration errors.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/scale_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ScaleLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ScaleLayerTest() : bottom_(new Blob<Dtype>(2, 3, 2, 2)), top_(new Blob<Dtype>()) {
    FillGaussian(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }

  std::unique_ptr<Blob<Dtype>> RandomBlob(const std::vector<int>& shape) {
    std::unique_ptr<Blob<Dtype>> blob(new Blob<Dtype>(shape));
    FillGaussian(blob.get());
    return blob;
  }

  // Expects that setting up a Scale layer named "scale5" throws an Error
  // that names it and contains fragment.
  void ExpectSetUpError(const LayerParameter& param, const std::vector<Blob<Dtype>*>& bottom,
                        const std::string& fragment) {
    LayerParameter named = param;
    named.set_name("scale5");
    ScaleLayer<Dtype> layer(named);
    try {
      layer.SetUp(bottom, this->top_vec_);
      FAIL() << "expected an Error containing '" << fragment << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("scale5"), std::string::npos) << message;
      EXPECT_NE(message.find("(Scale)"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

  // Runs param's layer out of place and in place on copies of bottom_ with
  // the same learned values and top diff, and expects the same top, bottom
  // diff and parameter diffs.
  void ExpectInPlaceBackwardMatches(const LayerParameter& param) {
    ScaleLayer<Dtype> out_of_place(param);
    out_of_place.SetUp(this->bottom_vec_, this->top_vec_);
    for (auto& blob : out_of_place.blobs()) FillGaussian(blob.get());
    out_of_place.Forward(this->bottom_vec_, this->top_vec_);
    Blob<Dtype> top_diff(this->top_->shape());
    FillGaussian(&top_diff);
    cpu_copy(top_diff.count(), top_diff.cpu_data(), this->top_->mutable_cpu_diff());
    for (auto& blob : out_of_place.blobs()) {
      cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
    }
    out_of_place.Backward(this->top_vec_, {true}, this->bottom_vec_);

    Blob<Dtype> in_place;
    in_place.CopyFrom(*this->bottom_, false, true);
    std::vector<Blob<Dtype>*> in_place_vec{&in_place};
    ScaleLayer<Dtype> layer_in_place(param);
    layer_in_place.SetUp(in_place_vec, in_place_vec);
    ASSERT_EQ(layer_in_place.blobs().size(), out_of_place.blobs().size());
    for (size_t i = 0; i < out_of_place.blobs().size(); ++i) {
      layer_in_place.blobs()[i]->CopyFrom(*out_of_place.blobs()[i]);
      cpu_set(layer_in_place.blobs()[i]->count(), Dtype(0),
              layer_in_place.blobs()[i]->mutable_cpu_diff());
    }
    layer_in_place.Forward(in_place_vec, in_place_vec);
    cpu_copy(top_diff.count(), top_diff.cpu_data(), in_place.mutable_cpu_diff());
    layer_in_place.Backward(in_place_vec, {true}, in_place_vec);

    const Dtype tolerance = 1e-5;
    for (int i = 0; i < in_place.count(); ++i) {
      EXPECT_NEAR(in_place.cpu_diff()[i], this->bottom_->cpu_diff()[i], tolerance) << i;
    }
    for (size_t b = 0; b < out_of_place.blobs().size(); ++b) {
      const Blob<Dtype>& expected = *out_of_place.blobs()[b];
      const Blob<Dtype>& actual = *layer_in_place.blobs()[b];
      for (int i = 0; i < expected.count(); ++i) {
        EXPECT_NEAR(actual.cpu_diff()[i], expected.cpu_diff()[i], tolerance)
            << "param " << b << " element " << i;
      }
    }
  }

  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ScaleLayerTest, TestDtypesAndDevices);

TYPED_TEST(ScaleLayerTest, ForwardLearnedWithBiasByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 2}), top;
  for (int i = 0; i < bottom.count(); ++i) bottom.mutable_cpu_data()[i] = Dtype(i);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param;
  ScaleLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  ASSERT_EQ(layer.blobs().size(), 1u);
  const Dtype scale[] = {2, -1, 0.5};
  std::copy(scale, scale + 3, layer.blobs()[0]->mutable_cpu_data());
  layer.Forward(bottom_vec, top_vec);
  // x = 0..11 laid out [n][c][s]; y = x * scale[c].
  const Dtype expected[] = {0, 2, -2, -3, 2, 2.5, 12, 14, -8, -9, 5, 5.5};
  for (int i = 0; i < top.count(); ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;

  param.mutable_scale_param()->set_bias_term(true);
  ScaleLayer<Dtype> with_bias(param);
  with_bias.SetUp(bottom_vec, top_vec);
  ASSERT_EQ(with_bias.blobs().size(), 2u);
  std::copy(scale, scale + 3, with_bias.blobs()[0]->mutable_cpu_data());
  const Dtype bias[] = {1, 10, 100};
  std::copy(bias, bias + 3, with_bias.blobs()[1]->mutable_cpu_data());
  with_bias.Forward(bottom_vec, top_vec);
  for (int i = 0; i < top.count(); ++i) {
    EXPECT_EQ(top.cpu_data()[i], expected[i] + bias[(i / 2) % 3]) << i;
  }
}

TYPED_TEST(ScaleLayerTest, ForwardFromBottomAxisZeroByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 2}), scale(std::vector<int>{2, 3}), top;
  for (int i = 0; i < bottom.count(); ++i) bottom.mutable_cpu_data()[i] = Dtype(i);
  for (int i = 0; i < scale.count(); ++i) scale.mutable_cpu_data()[i] = Dtype(i - 2);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom, &scale}, top_vec{&top};
  LayerParameter param;
  param.mutable_scale_param()->set_axis(0);
  ScaleLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  EXPECT_TRUE(layer.blobs().empty());
  layer.Forward(bottom_vec, top_vec);
  // Scales -2, -1, 0, 1, 2, 3, two elements each.
  const Dtype expected[] = {0, -2, -2, -3, 0, 0, 6, 7, 16, 18, 30, 33};
  for (int i = 0; i < top.count(); ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(ScaleLayerTest, LearnedBlobsOrderShapesAndFillers) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_scale_param()->set_axis(0);
  param.mutable_scale_param()->set_num_axes(2);
  param.mutable_scale_param()->set_bias_term(true);
  ScaleLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 2u);
  const std::vector<int> shape{2, 3};
  EXPECT_EQ(layer.blobs()[0]->shape(), shape);
  EXPECT_EQ(layer.blobs()[1]->shape(), shape);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(layer.blobs()[0]->cpu_data()[i], Dtype(1)) << i;  // identity scale
    EXPECT_EQ(layer.blobs()[1]->cpu_data()[i], Dtype(0)) << i;  // zero bias
  }

  param.mutable_scale_param()->mutable_filler()->set_value(3);
  param.mutable_scale_param()->mutable_bias_filler()->set_value(-2);
  ScaleLayer<Dtype> filled(param);
  filled.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(filled.blobs()[0]->cpu_data()[5], Dtype(3));
  EXPECT_EQ(filled.blobs()[1]->cpu_data()[5], Dtype(-2));

  // With the scale from bottom[1], the bias is the only learned blob and
  // takes bottom[1]'s shape.
  auto scale = this->RandomBlob({3, 2});
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), scale.get()};
  LayerParameter from_bottom;
  from_bottom.mutable_scale_param()->set_bias_term(true);
  ScaleLayer<Dtype> bias_only(from_bottom);
  bias_only.SetUp(bottom_vec, this->top_vec_);
  ASSERT_EQ(bias_only.blobs().size(), 1u);
  EXPECT_EQ(bias_only.blobs()[0]->shape(), (std::vector<int>{3, 2}));
}

TYPED_TEST(ScaleLayerTest, InPlaceForwardMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_scale_param()->set_bias_term(true);
  param.mutable_scale_param()->mutable_filler()->set_type("gaussian");
  param.mutable_scale_param()->mutable_bias_filler()->set_type("gaussian");
  ScaleLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> in_place;
  in_place.CopyFrom(*this->bottom_, false, true);
  std::vector<Blob<Dtype>*> in_place_vec{&in_place};
  layer.Forward(in_place_vec, in_place_vec);
  for (int i = 0; i < in_place.count(); ++i) {
    EXPECT_NEAR(in_place.cpu_data()[i], this->top_->cpu_data()[i], 1e-6) << i;
  }
}

TYPED_TEST(ScaleLayerTest, GradientLearned) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_scale_param()->mutable_filler()->set_type("gaussian");
  ScaleLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ScaleLayerTest, GradientLearnedAxisZeroTwoAxesWithBias) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_scale_param()->set_axis(0);
  param.mutable_scale_param()->set_num_axes(2);
  param.mutable_scale_param()->set_bias_term(true);
  param.mutable_scale_param()->mutable_filler()->set_type("gaussian");
  param.mutable_scale_param()->mutable_bias_filler()->set_type("gaussian");
  ScaleLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ScaleLayerTest, GradientFromBottom) {
  using Dtype = typename TypeParam::Dtype;
  auto scale = this->RandomBlob({3, 2});
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), scale.get()};
  LayerParameter param;
  ScaleLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->top_vec_);
}

TYPED_TEST(ScaleLayerTest, GradientFromBottomEltwiseWithBias) {
  using Dtype = typename TypeParam::Dtype;
  auto scale = this->RandomBlob(this->bottom_->shape());
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), scale.get()};
  LayerParameter param;
  param.mutable_scale_param()->set_axis(0);
  param.mutable_scale_param()->set_bias_term(true);
  param.mutable_scale_param()->mutable_bias_filler()->set_type("gaussian");
  ScaleLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->top_vec_);
}

// The gradient checker cannot run in place (the forward pass overwrites the
// values it perturbs), so in-place backward is held to the out-of-place one
// checked above.
TYPED_TEST(ScaleLayerTest, GradientInPlaceMatchesOutOfPlace) {
  LayerParameter param;
  this->ExpectInPlaceBackwardMatches(param);
  param.mutable_scale_param()->set_bias_term(true);
  this->ExpectInPlaceBackwardMatches(param);
}

// Planes of 72 values: the GPU body gives each (image, channel) plane a
// block of its own from 64 values on (one sweep for scale, bias and the
// copy in place; one for the three gradients).
TYPED_TEST(ScaleLayerTest, GradientLargePlanesWithBias) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_ = this->RandomBlob({2, 3, 8, 9});
  this->bottom_vec_ = {this->bottom_.get()};
  LayerParameter param;
  param.mutable_scale_param()->set_bias_term(true);
  param.mutable_scale_param()->mutable_filler()->set_type("gaussian");
  param.mutable_scale_param()->mutable_bias_filler()->set_type("gaussian");
  ScaleLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ScaleLayerTest, LargePlanesInPlaceMatchesOutOfPlace) {
  this->bottom_ = this->RandomBlob({2, 3, 8, 9});
  this->bottom_vec_ = {this->bottom_.get()};
  LayerParameter param;
  this->ExpectInPlaceBackwardMatches(param);
  param.mutable_scale_param()->set_bias_term(true);
  this->ExpectInPlaceBackwardMatches(param);
}

TYPED_TEST(ScaleLayerTest, LargePlanesForwardAndSumsByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 8, 9});
  cpu_set(bottom.count(), Dtype(2), bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  LayerParameter param;
  param.mutable_scale_param()->set_bias_term(true);
  ScaleLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, this->top_vec_);
  const Dtype scale[] = {1, -3, 0.5}, bias[] = {0.25, 1, -2};
  cpu_copy(3, scale, layer.blobs()[0]->mutable_cpu_data());
  cpu_copy(3, bias, layer.blobs()[1]->mutable_cpu_data());
  layer.Forward(bottom_vec, this->top_vec_);
  for (int i = 0; i < this->top_->count(); ++i) {
    const int c = (i / 72) % 3;
    ASSERT_EQ(this->top_->cpu_data()[i], 2 * scale[c] + bias[c]) << i;
  }
  cpu_set(this->top_->count(), Dtype(1), this->top_->mutable_cpu_diff());
  for (auto& blob : layer.blobs()) cpu_set(blob->count(), Dtype(5), blob->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, bottom_vec);
  // Each channel sums 2 images x 72 positions of top_diff * x = 2 (scale)
  // or of top_diff = 1 (bias); the bottom diff is top_diff * scale.
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(layer.blobs()[0]->cpu_diff()[c], Dtype(5 + 288)) << c;
    EXPECT_EQ(layer.blobs()[1]->cpu_diff()[c], Dtype(5 + 144)) << c;
  }
  for (int i = 0; i < bottom.count(); ++i) {
    ASSERT_EQ(bottom.cpu_diff()[i], scale[(i / 72) % 3]) << i;
  }
}

TYPED_TEST(ScaleLayerTest, LearnedDiffAccumulatesBottomDiffOverwritten) {
  using Dtype = typename TypeParam::Dtype;
  cpu_set(this->bottom_->count(), Dtype(2), this->bottom_->mutable_cpu_data());
  LayerParameter param;
  param.mutable_scale_param()->set_bias_term(true);
  ScaleLayer<Dtype> learned(param);
  learned.SetUp(this->bottom_vec_, this->top_vec_);
  learned.Forward(this->bottom_vec_, this->top_vec_);
  cpu_set(this->top_->count(), Dtype(1), this->top_->mutable_cpu_diff());
  for (auto& blob : learned.blobs()) cpu_set(blob->count(), Dtype(5), blob->mutable_cpu_diff());
  learned.Backward(this->top_vec_, {true}, this->bottom_vec_);
  // Each channel sums 2 images x 4 positions of top_diff * x = 2 (scale) or
  // of top_diff = 1 (bias).
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(learned.blobs()[0]->cpu_diff()[c], Dtype(5 + 16)) << c;
    EXPECT_EQ(learned.blobs()[1]->cpu_diff()[c], Dtype(5 + 8)) << c;
  }

  auto scale = this->RandomBlob({3});
  std::vector<Blob<Dtype>*> bottom_vec{this->bottom_.get(), scale.get()};
  ScaleLayer<Dtype> from_bottom(LayerParameter{});
  from_bottom.SetUp(bottom_vec, this->top_vec_);
  from_bottom.Forward(bottom_vec, this->top_vec_);
  cpu_set(this->top_->count(), Dtype(1), this->top_->mutable_cpu_diff());
  cpu_set(3, Dtype(5), scale->mutable_cpu_diff());
  from_bottom.Backward(this->top_vec_, {false, true}, bottom_vec);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(scale->cpu_diff()[c], Dtype(16)) << c;
}

TYPED_TEST(ScaleLayerTest, ShapeMismatchWithBottomThrows) {
  auto scale = this->RandomBlob({2, 3});
  this->ExpectSetUpError(LayerParameter(), {this->bottom_.get(), scale.get()}, "shape");
  LayerParameter with_bias;
  with_bias.mutable_scale_param()->set_bias_term(true);
  this->ExpectSetUpError(with_bias, {this->bottom_.get(), scale.get()}, "shape");
}

TYPED_TEST(ScaleLayerTest, AxisOutOfRangeThrows) {
  LayerParameter param;
  param.mutable_scale_param()->set_axis(-5);
  this->ExpectSetUpError(param, this->bottom_vec_, "axis -5");
  param.mutable_scale_param()->set_axis(4);
  auto scale = this->RandomBlob({3});
  this->ExpectSetUpError(param, {this->bottom_.get(), scale.get()}, "axis 4");
  param.mutable_scale_param()->set_axis(3);
  param.mutable_scale_param()->set_num_axes(2);
  this->ExpectSetUpError(param, this->bottom_vec_, "num_axes 2");
}

TYPED_TEST(ScaleLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Scale");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Scale");
}

}  // namespace
}  // namespace crema
