// PriorBox: boxes and variances worked out by hand for small feature maps
// (values agree with OpenCV 4.6 given the same image size and clip setting),
// aspect-ratio de-duplication, clipping, explicit image size and step, zero
// gradient, and refusal of every bad parameter, on every device.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crema/layers/prior_box_layer.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class PriorBoxLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Feature map 1 x 2 (H x W) on an image 4 x 8: steps of 4 pixels.
  PriorBoxLayerTest()
      : feature_(new Blob<Dtype>(1, 5, 1, 2)),
        image_(new Blob<Dtype>(1, 3, 4, 8)),
        top_(new Blob<Dtype>()),
        bottom_vec_{feature_.get(), image_.get()},
        top_vec_{top_.get()} {}

  // The top after a forward pass with param's prior_box_param given as text.
  std::vector<Dtype> Forward(const std::string& prior_box_param) {
    PriorBoxLayer<Dtype> layer(Param(prior_box_param));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    return std::vector<Dtype>(top_->cpu_data(), top_->cpu_data() + top_->count());
  }

  static LayerParameter Param(const std::string& prior_box_param) {
    return ParseLayer("name: 'priors' type: 'PriorBox' prior_box_param { " + prior_box_param +
                      " }");
  }

  static LayerParameter ParseLayer(const std::string& text) {
    NetParameter net = ParseNet("layer { " + text + " }");
    return net.layer(0);
  }

  void ExpectRefused(const std::string& prior_box_param) {
    PriorBoxLayer<Dtype> layer(Param(prior_box_param));
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec_, top_vec_);
  }

  std::unique_ptr<Blob<Dtype>> feature_, image_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(PriorBoxLayerTest, TestDtypesAndDevices);

template <typename Dtype>
void ExpectNear(const std::vector<Dtype>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-6) << i;
}

TYPED_TEST(PriorBoxLayerTest, ForwardByHand) {
  // Per cell: 2 x 2, sqrt(2 * 8) = 4 square, then ratio 2 and 1/2 boxes of
  // 2 * sqrt(r) by 2 / sqrt(r); centres (2, 2) and (6, 2); x / 8, y / 4.
  const auto top = this->Forward("min_size: 2 max_size: 8 aspect_ratio: 2");
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 2, 32}));
  std::vector<double> expected = {0.125,     0.25,      0.375,     0.75,        // 2 x 2 at (2, 2)
                                  0,         0,         0.5,       1,           // 4 x 4
                                  0.0732233, 0.3232233, 0.4267767, 0.6767767,   // ratio 2
                                  0.1616117, 0.1464466, 0.3383883, 0.8535534,   // ratio 1/2
                                  0.625,     0.25,      0.875,     0.75,        // 2 x 2 at (6, 2)
                                  0.5,       0,         1,         1,           // 4 x 4
                                  0.5732233, 0.3232233, 0.9267767, 0.6767767,   // ratio 2
                                  0.6616117, 0.1464466, 0.8383883, 0.8535534};  // ratio 1/2
  expected.resize(64, 0.1);  // the default variance
  ExpectNear(top, expected);
}

// The boxes depend on the sizes alone, so a pass writes them only where the
// top does not hold them already: a top written since, or new sizes, get
// them anew.
TYPED_TEST(PriorBoxLayerTest, APassRewritesATopChangedSinceOrNewSizes) {
  using Dtype = typename TypeParam::Dtype;
  PriorBoxLayer<Dtype> layer(this->Param("min_size: 2 max_size: 8 aspect_ratio: 2"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const std::vector<Dtype> first(this->top_->cpu_data(),
                                 this->top_->cpu_data() + this->top_->count());
  this->top_->mutable_cpu_data()[5] = Dtype(7);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_->cpu_data()[5], first[5]);
  this->feature_->Reshape({1, 5, 2, 2});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_->count(), 2 * 64);
  // Steps now 2 pixels down: the first 2 x 2 box spans y 0 to 2 (ymin 0),
  // the first of the second row (index 32) y 2 to 4 (ymin 0.5).
  EXPECT_NEAR(this->top_->cpu_data()[1], 0.0, 1e-6);
  EXPECT_NEAR(this->top_->cpu_data()[32 + 1], 0.5, 1e-6);
}

TYPED_TEST(PriorBoxLayerTest, ClipAndFourVariances) {
  // 6 x 6 boxes at (2, 2) and (6, 2) reach past the image; clip cuts them.
  const auto top = this->Forward(
      "min_size: 6 clip: true variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2");
  ExpectNear(top, {0, 0, 0.625, 1, 0.375, 0, 1, 1,  // boxes
                   0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2});
}

TYPED_TEST(PriorBoxLayerTest, UnclippedBoxesMayLeaveTheImage) {
  const auto top = this->Forward("min_size: 6");
  ExpectNear(top, {-0.125, -0.25, 0.625, 1.25, 0.375, -0.25, 1.125, 1.25,  // boxes
                   0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1});
}

TYPED_TEST(PriorBoxLayerTest, ImageSizeStepOffsetAndDuplicateRatios) {
  // A 2 x 1 map; img_size 10, step 5, offset 0: centres (0, 0) and (0, 5).
  // Ratios 2, 2 and 1 give 1 and 2 only (flip off).
  using Dtype = typename TypeParam::Dtype;
  this->feature_->Reshape(1, 5, 2, 1);
  const auto top = this->Forward(
      "min_size: 3 aspect_ratio: 2 aspect_ratio: 2 aspect_ratio: 1 flip: false variance: 0.5 "
      "img_size: 10 step: 5 offset: 0");
  std::vector<double> expected = {
      -0.15, -0.15, 0.15, 0.15, -0.2121320, -0.1060660, 0.2121320, 0.1060660,
      -0.15, 0.35,  0.15, 0.65, -0.2121320, 0.3939340,  0.2121320, 0.6060660};
  expected.resize(32, 0.5);
  ExpectNear<Dtype>(top, expected);
}

TYPED_TEST(PriorBoxLayerTest, SeparateImageSidesAndSteps) {
  // img_h 8, img_w 16, step_h 2, step_w 4: centre (2, 1) then (6, 1).
  const auto top = this->Forward("min_size: 2 img_h: 8 img_w: 16 step_h: 2 step_w: 4");
  ExpectNear(top, {0.0625, 0, 0.1875, 0.25, 0.3125, 0, 0.4375, 0.25,  // boxes
                   0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1});
}

TYPED_TEST(PriorBoxLayerTest, SeveralMinSizesEachWithTheirMaxSize) {
  // On one cell: 1, sqrt(1 * 4) = 2, then 2, sqrt(2 * 8) = 4, centred at (2, 2).
  this->feature_->Reshape(1, 5, 1, 1);
  this->image_->Reshape(1, 3, 4, 4);
  const auto top = this->Forward("min_size: 1 min_size: 2 max_size: 4 max_size: 8");
  std::vector<double> expected = {0.375, 0.375, 0.625, 0.625, 0.25, 0.25, 0.75, 0.75,
                                  0.25,  0.25,  0.75,  0.75,  0,    0,    1,    1};
  expected.resize(32, 0.1);
  ExpectNear(top, expected);
}

TYPED_TEST(PriorBoxLayerTest, GradientIsZero) {
  using Dtype = typename TypeParam::Dtype;
  PriorBoxLayer<Dtype> layer(this->Param("min_size: 2"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  cpu_set(this->feature_->count(), Dtype(7), this->feature_->mutable_cpu_diff());
  cpu_set(this->top_->count(), Dtype(1), this->top_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->feature_->count(); ++i) EXPECT_EQ(this->feature_->cpu_diff()[i], 0);
}

TYPED_TEST(PriorBoxLayerTest, BadParametersRefused) {
  for (const std::string bad : {"",  // no min_size
                                "min_size: 0",
                                "min_size: -2",                         // min_size <= 0
                                "min_size: 2 min_size: 3 max_size: 8",  // counts differ
                                "min_size: 2 max_size: 2",
                                "min_size: 2 max_size: 1",
                                "min_size: 2 aspect_ratio: 0",
                                "min_size: 2 aspect_ratio: -1",
                                "min_size: 2 variance: 0.1 variance: 0.2",  // 2 variances
                                "min_size: 2 variance: 0",
                                "min_size: 2 variance: -0.1",
                                "min_size: 2 step: 0",
                                "min_size: 2 step: -4",
                                "min_size: 2 step_h: 0 step_w: 4",
                                "min_size: 2 step_h: 4",
                                "min_size: 2 step: 4 step_h: 4 step_w: 4",
                                "min_size: 2 img_size: 8 img_h: 8 img_w: 8",
                                "min_size: 2 img_h: 8",
                                "min_size: 2 img_size: 0",
                                "min_size: 2 img_h: 0 img_w: 8",
                                "min_size: 2 offset: -0.1",
                                "min_size: 2 offset: 1.5"}) {
    SCOPED_TRACE(bad);
    this->ExpectRefused(bad);
  }
}

TYPED_TEST(PriorBoxLayerTest, BottomsMustHaveFourAxes) {
  using Dtype = typename TypeParam::Dtype;
  this->feature_->Reshape(std::vector<int>{1, 5, 2});
  PriorBoxLayer<Dtype> layer(this->Param("min_size: 2"));
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PriorBoxLayerTest, TooLargeTopRefused) {
  using Dtype = typename TypeParam::Dtype;
  // 20000 x 20000 cells of 2 priors: 3.2e9 values.
  Blob<Dtype> feature;
  feature.Reshape(std::vector<int>{1, 0, 20000, 20000});
  std::vector<Blob<Dtype>*> bottom{&feature, this->image_.get()};
  PriorBoxLayer<Dtype> layer(this->Param("min_size: 2 aspect_ratio: 2 flip: false"));
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom, this->top_vec_);
}

TYPED_TEST(PriorBoxLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("PriorBox");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "PriorBox");
}

}  // namespace
}  // namespace crema
