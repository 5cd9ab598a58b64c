// DetectionOutput: box decoding per code type, Jaccard overlap and greedy NMS
// (adaptive eta, top_k) by hand; the layer's detections on small heads by
// hand (shared and per-class locations, keep_top_k, several images, the
// nothing-kept rows), the by-hand sets agreeing with OpenCV 4.6; refusal of
// bad parameters and shapes; and a small SSD head (Normalize, Convolution,
// Permute, Flatten, Concat, PriorBox, Softmax, DetectionOutput) built from a
// prototxt, whose detections must obey the layer's invariants.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/layers/detection_output_layer.hpp"
#include "crema/net.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

using ssd::DetectionBox;

void ExpectBoxNear(const DetectionBox& box, const std::vector<float>& expected) {
  EXPECT_NEAR(box.xmin, expected[0], 1e-6);
  EXPECT_NEAR(box.ymin, expected[1], 1e-6);
  EXPECT_NEAR(box.xmax, expected[2], 1e-6);
  EXPECT_NEAR(box.ymax, expected[3], 1e-6);
}

// Prior (0.1, 0.2, 0.5, 0.6): 0.4 x 0.4 centred at (0.3, 0.4); variances
// 0.1, 0.1, 0.2, 0.2; offsets (1, -1, 2, 0.5).
const DetectionBox kPrior{0.1f, 0.2f, 0.5f, 0.6f};
const float kVariance[4] = {0.1f, 0.1f, 0.2f, 0.2f};

TEST(DetectionBoxTest, DecodeCorner) {
  // Each corner moves by variance * offset.
  ExpectBoxNear(
      ssd::DecodeBox(kPrior, kVariance, {1, -1, 2, 0.5}, PriorBoxParameter::CORNER, false),
      {0.2f, 0.1f, 0.9f, 0.7f});
  // Encoded in the target: the offsets are added as they are.
  ExpectBoxNear(ssd::DecodeBox(kPrior, kVariance, {1, -1, 2, 0.5}, PriorBoxParameter::CORNER, true),
                {1.1f, -0.8f, 2.5f, 1.1f});
}

TEST(DetectionBoxTest, DecodeCenterSize) {
  // Centre (0.3 + 0.1 * 1 * 0.4, 0.4 - 0.1 * 1 * 0.4) = (0.34, 0.36); width
  // exp(0.2 * 5 ln 2) * 0.4 = 0.8, height exp(0) * 0.4 = 0.4.
  const float log2_times_5 = 5 * std::log(2.f);
  ExpectBoxNear(ssd::DecodeBox(kPrior, kVariance, {1, -1, log2_times_5, 0},
                               PriorBoxParameter::CENTER_SIZE, false),
                {-0.06f, 0.16f, 0.74f, 0.56f});
  // Encoded in the target: centre (0.3 + 0.4 * 0.1, 0.4), size 0.4 e^0 x 0.4.
  ExpectBoxNear(
      ssd::DecodeBox(kPrior, kVariance, {0.1f, 0, 0, 0}, PriorBoxParameter::CENTER_SIZE, true),
      {0.14f, 0.2f, 0.54f, 0.6f});
}

TEST(DetectionBoxTest, DecodeCornerSize) {
  // Each corner moves by variance * offset * the prior's side.
  ExpectBoxNear(
      ssd::DecodeBox(kPrior, kVariance, {1, -1, 2, 0.5}, PriorBoxParameter::CORNER_SIZE, false),
      {0.14f, 0.16f, 0.66f, 0.64f});
  ExpectBoxNear(
      ssd::DecodeBox(kPrior, kVariance, {1, -1, 2, 0.5}, PriorBoxParameter::CORNER_SIZE, true),
      {0.5f, -0.2f, 1.3f, 0.8f});
}

TEST(DetectionBoxTest, JaccardOverlap) {
  // 0.18 x 0.2 shared by two 0.2 x 0.2 boxes: 0.036 / 0.044.
  EXPECT_NEAR(ssd::JaccardOverlap({0.1f, 0.1f, 0.3f, 0.3f}, {0.12f, 0.1f, 0.32f, 0.3f}),
              0.036 / 0.044, 1e-5);
  EXPECT_FLOAT_EQ(ssd::JaccardOverlap({0, 0, 1, 1}, {0, 0, 1, 0.6f}), 0.6f);
  // Touching or apart: 0.
  EXPECT_EQ(ssd::JaccardOverlap({0, 0, 1, 1}, {1, 0, 2, 1}), 0);
  EXPECT_EQ(ssd::JaccardOverlap({0, 0, 1, 1}, {2, 2, 3, 3}), 0);
  // An inverted box has no area.
  EXPECT_EQ(ssd::DetectionBoxArea({1, 1, 0, 0}), 0);
}

TEST(DetectionBoxTest, NmsKeepsBestAndSuppressesOverlaps) {
  // Boxes 0 and 1 overlap at 0.6, box 2 apart; scores 0.7, 0.9, 0.8.
  const std::vector<DetectionBox> boxes = {{0, 0, 1, 0.6f}, {0, 0, 1, 1}, {2, 2, 3, 3}};
  const std::vector<float> scores = {0.7f, 0.9f, 0.8f};
  EXPECT_EQ(ssd::ApplyNms(boxes, scores, 0, 0.5f, 1, -1), (std::vector<int>{1, 2}));
  // Threshold 0.7: 0.6 overlap is allowed.
  EXPECT_EQ(ssd::ApplyNms(boxes, scores, 0, 0.7f, 1, -1), (std::vector<int>{1, 2, 0}));
  // Only scores above the confidence threshold are candidates.
  EXPECT_EQ(ssd::ApplyNms(boxes, scores, 0.8f, 0.7f, 1, -1), (std::vector<int>{1}));
  // top_k 2: box 0 (third best) is never a candidate.
  EXPECT_EQ(ssd::ApplyNms(boxes, scores, 0, 0.7f, 1, 2), (std::vector<int>{1, 2}));
}

TEST(DetectionBoxTest, NmsAdaptiveEta) {
  // Threshold 0.7; after box 1 is kept it becomes 0.7 * 0.5 = 0.35 (0.7 was
  // above 0.5), so box 0, overlapping by 0.6, is now suppressed.
  const std::vector<DetectionBox> boxes = {{0, 0, 1, 0.6f}, {0, 0, 1, 1}};
  const std::vector<float> scores = {0.7f, 0.9f};
  EXPECT_EQ(ssd::ApplyNms(boxes, scores, 0, 0.7f, 1, -1), (std::vector<int>{1, 0}));
  EXPECT_EQ(ssd::ApplyNms(boxes, scores, 0, 0.7f, 0.5f, -1), (std::vector<int>{1}));
  // A threshold of 0.5 or below does not adapt.
  const std::vector<DetectionBox> apart = {{0, 0, 1, 0.45f}, {0, 0, 1, 1}};
  EXPECT_EQ(ssd::ApplyNms(apart, scores, 0, 0.5f, 0.5f, -1), (std::vector<int>{1, 0}));
}

template <typename TypeParam>
class DetectionOutputLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Four priors: 0 and 1 overlap by 0.82, 2 and 3 by 0.6; variances 0.1;
  // three classes (0 the background); zero offsets: the boxes are the priors.
  DetectionOutputLayerTest()
      : loc_(new Blob<Dtype>(std::vector<int>{1, 16})),
        conf_(new Blob<Dtype>(std::vector<int>{1, 12})),
        prior_(new Blob<Dtype>(std::vector<int>{1, 2, 16})),
        top_(new Blob<Dtype>()),
        bottom_vec_{loc_.get(), conf_.get(), prior_.get()},
        top_vec_{top_.get()} {
    std::vector<double> priors = {0.1, 0.1, 0.3, 0.3, 0.12, 0.1, 0.32, 0.3,
                                  0.5, 0.5, 0.9, 0.9, 0.6,  0.5, 1.0,  0.9};
    priors.resize(32, 0.1);
    SetValues(prior_.get(), priors);
    SetValues(loc_.get(), std::vector<double>(16, 0));
    SetValues(conf_.get(), {0.1, 0.8, 0.1, 0.2, 0.7, 0.1, 0.3, 0.2, 0.5, 0.1, 0.3, 0.6});
  }

  static LayerParameter Param(const std::string& detection_output_param) {
    NetParameter net =
        ParseNet("layer { name: 'detect' type: 'DetectionOutput' detection_output_param { " +
                 detection_output_param + " } }");
    return net.layer(0);
  }

  // The top's rows after a forward pass.
  std::vector<std::vector<double>> Rows(const std::string& detection_output_param) {
    DetectionOutputLayer<Dtype> layer(Param(detection_output_param));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    EXPECT_EQ(top_->num_axes(), 4);
    EXPECT_EQ(top_->shape(3), 7);
    std::vector<std::vector<double>> rows;
    for (int r = 0; r < top_->count() / 7; ++r) {
      rows.emplace_back(top_->cpu_data() + r * 7, top_->cpu_data() + r * 7 + 7);
    }
    return rows;
  }

  void ExpectRefused(const std::string& detection_output_param) {
    DetectionOutputLayer<Dtype> layer(Param(detection_output_param));
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec_, top_vec_);
  }

  std::unique_ptr<Blob<Dtype>> loc_, conf_, prior_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(DetectionOutputLayerTest, TestDtypesAndDevices);

const char kBase[] =
    "num_classes: 3 background_label_id: 0 nms_param { nms_threshold: 0.45 } "
    "confidence_threshold: 0.15 ";

void ExpectRowsNear(const std::vector<std::vector<double>>& rows,
                    const std::vector<std::vector<double>>& expected) {
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int j = 0; j < 7; ++j) EXPECT_NEAR(rows[r][j], expected[r][j], 1e-6) << r << ", " << j;
  }
}

TYPED_TEST(DetectionOutputLayerTest, ForwardByHand) {
  // Class 1 by score: priors 0 (0.8), 1 (0.7, suppressed by 0), 3 (0.3),
  // 2 (0.2, suppressed by 3). Class 2: 3 (0.6), 2 (0.5, suppressed).
  ExpectRowsNear(this->Rows(kBase), {{0, 1, 0.8, 0.1, 0.1, 0.3, 0.3},
                                     {0, 1, 0.3, 0.6, 0.5, 1.0, 0.9},
                                     {0, 2, 0.6, 0.6, 0.5, 1.0, 0.9}});
}

TYPED_TEST(DetectionOutputLayerTest, KeepTopKAcrossClasses) {
  // The two best scores, 0.8 and 0.6, stay; rows by label, then score.
  ExpectRowsNear(this->Rows(std::string(kBase) + "keep_top_k: 2"),
                 {{0, 1, 0.8, 0.1, 0.1, 0.3, 0.3}, {0, 2, 0.6, 0.6, 0.5, 1.0, 0.9}});
}

TYPED_TEST(DetectionOutputLayerTest, NmsTopKPerClass) {
  // top_k 1: each class's best box only.
  ExpectRowsNear(this->Rows("num_classes: 3 nms_param { nms_threshold: 0.45 top_k: 1 } "
                            "confidence_threshold: 0.15"),
                 {{0, 1, 0.8, 0.1, 0.1, 0.3, 0.3}, {0, 2, 0.6, 0.6, 0.5, 1.0, 0.9}});
}

TYPED_TEST(DetectionOutputLayerTest, NoBackgroundClass) {
  // background_label_id -1: class 0 is a class too; its candidates are
  // priors 2 (0.3) and 1 (0.2), apart, both kept, before classes 1 and 2.
  const auto rows = this->Rows(
      "num_classes: 3 background_label_id: -1 nms_param { nms_threshold: 0.45 } "
      "confidence_threshold: 0.15");
  ASSERT_EQ(rows.size(), 5u);
  ExpectRowsNear({rows[0], rows[1]},
                 {{0, 0, 0.3, 0.5, 0.5, 0.9, 0.9}, {0, 0, 0.2, 0.12, 0.1, 0.32, 0.3}});
}

TYPED_TEST(DetectionOutputLayerTest, CenterSizeDecodingWithOffsets) {
  // Prior 0 moved by (1, -1) variances of its size: 0.2 x 0.2 prior centred at
  // (0.2, 0.2) goes to (0.22, 0.18); width scaled by exp(0.1 * 10 ln 2) = 2.
  using Dtype = typename TypeParam::Dtype;
  Dtype* loc = this->loc_->mutable_cpu_data();
  loc[0] = 1;
  loc[1] = -1;
  loc[2] = 10 * std::log(2.0);
  const auto rows = this->Rows(std::string(kBase) + "code_type: CENTER_SIZE");
  // Prior 1 now overlaps the moved box by 0.036 / 0.084 < 0.45: kept.
  ASSERT_EQ(rows.size(), 4u);
  ExpectRowsNear({rows[0], rows[1]},
                 {{0, 1, 0.8, 0.02, 0.08, 0.42, 0.28}, {0, 1, 0.7, 0.12, 0.1, 0.32, 0.3}});
}

// OpenCV's clip (its face detector's deploy file sets it): decoded boxes are
// clamped to [0, 1] before NMS, so the clamped boxes are what NMS compares
// and what the rows hold.
TYPED_TEST(DetectionOutputLayerTest, ClipClampsDecodedBoxesBeforeNms) {
  using Dtype = typename TypeParam::Dtype;
  // Prior 3 (0.6, 0.5, 1.0, 0.9) moved right by 0.2 and down by 0.2: past 1.
  Dtype* loc = this->loc_->mutable_cpu_data();
  for (int j : {0, 2}) loc[3 * 4 + j] = 2;
  for (int j : {1, 3}) loc[3 * 4 + j] = 2;
  const auto unclipped = this->Rows(kBase);
  ExpectRowsNear({unclipped[1]}, {{0, 1, 0.3, 0.8, 0.7, 1.2, 1.1}});
  const auto clipped = this->Rows(std::string(kBase) + "clip: true");
  ASSERT_EQ(clipped.size(), unclipped.size());
  ExpectRowsNear({clipped[1]}, {{0, 1, 0.3, 0.8, 0.7, 1.0, 1.0}});
}

TYPED_TEST(DetectionOutputLayerTest, PerClassLocations) {
  // share_location false: each prior has 3 boxes, one per class; class 1
  // moves prior 1 away (offsets / variance 0.1: +0.5 in x), so it is no
  // longer suppressed by prior 0; class 2 keeps the prior boxes.
  this->loc_->Reshape(std::vector<int>{1, 48});
  std::vector<double> loc(48, 0);
  for (int j : {0, 2}) loc[(1 * 3 + 1) * 4 + j] = 5;  // prior 1, class 1: x + 0.5
  SetValues(this->loc_.get(), loc);
  const auto rows = this->Rows(std::string(kBase) + "share_location: false");
  ExpectRowsNear(rows, {{0, 1, 0.8, 0.1, 0.1, 0.3, 0.3},
                        {0, 1, 0.7, 0.62, 0.1, 0.82, 0.3},
                        {0, 1, 0.3, 0.6, 0.5, 1.0, 0.9},
                        {0, 2, 0.6, 0.6, 0.5, 1.0, 0.9}});
}

TYPED_TEST(DetectionOutputLayerTest, SeveralImages) {
  // Image 1 has the scores of image 0 with classes 1 and 2 swapped.
  this->loc_->Reshape(std::vector<int>{2, 16});
  this->conf_->Reshape(std::vector<int>{2, 12});
  SetValues(this->loc_.get(), std::vector<double>(32, 0));
  SetValues(this->conf_.get(), {0.1, 0.8, 0.1, 0.2, 0.7, 0.1, 0.3, 0.2, 0.5, 0.1, 0.3, 0.6,
                                0.1, 0.1, 0.8, 0.2, 0.1, 0.7, 0.3, 0.5, 0.2, 0.1, 0.6, 0.3});
  ExpectRowsNear(this->Rows(kBase), {{0, 1, 0.8, 0.1, 0.1, 0.3, 0.3},
                                     {0, 1, 0.3, 0.6, 0.5, 1.0, 0.9},
                                     {0, 2, 0.6, 0.6, 0.5, 1.0, 0.9},
                                     {1, 1, 0.6, 0.6, 0.5, 1.0, 0.9},
                                     {1, 2, 0.8, 0.1, 0.1, 0.3, 0.3},
                                     {1, 2, 0.3, 0.6, 0.5, 1.0, 0.9}});
}

TYPED_TEST(DetectionOutputLayerTest, NothingKeptGivesOneRowPerImage) {
  // The fork's convention: [1, 1, N, 7], -1 everywhere but the image id.
  this->loc_->Reshape(std::vector<int>{2, 16});
  this->conf_->Reshape(std::vector<int>{2, 12});
  SetValues(this->loc_.get(), std::vector<double>(32, 0));
  SetValues(this->conf_.get(), std::vector<double>(24, 0.5));
  const auto rows = this->Rows("num_classes: 3 confidence_threshold: 0.99");
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 2, 7}));
  ExpectRowsNear(rows, {{0, -1, -1, -1, -1, -1, -1}, {1, -1, -1, -1, -1, -1, -1}});
}

TYPED_TEST(DetectionOutputLayerTest, OutputRequestsOnlyWarn) {
  // Crema writes no files and draws nothing: set-up warns and goes on.
  const auto rows =
      this->Rows(std::string(kBase) +
                 "visualize: true save_output_param { output_directory: '/nonexistent' "
                 "output_format: 'VOC' }");
  EXPECT_EQ(rows.size(), 3u);
}

TYPED_TEST(DetectionOutputLayerTest, BadParametersRefused) {
  for (const std::string bad :
       {"",  // no num_classes
        "num_classes: 0", "num_classes: 3 background_label_id: 3",
        "num_classes: 3 nms_param { nms_threshold: -0.1 }",
        "num_classes: 3 nms_param { nms_threshold: 1.5 }", "num_classes: 3 nms_param { eta: 0 }",
        "num_classes: 3 nms_param { eta: 1.5 }", "num_classes: 3 nms_param { top_k: 0 }",
        "num_classes: 3 nms_param { top_k: -2 }", "num_classes: 3 keep_top_k: 0",
        "num_classes: 3 keep_top_k: -2", "num_classes: 3 confidence_threshold: inf",
        "num_classes: 3 confidence_threshold: nan",
        "num_classes: 2",                           // conf holds 4 x 3 values
        "num_classes: 3 share_location: false"}) {  // loc holds 4 x 1 boxes
    SCOPED_TRACE(bad);
    this->ExpectRefused(bad);
  }
}

TYPED_TEST(DetectionOutputLayerTest, BadShapesRefused) {
  using Dtype = typename TypeParam::Dtype;
  const LayerParameter param = this->Param(kBase);
  const auto refused = [&](Blob<Dtype>* blob, const std::vector<int>& shape) {
    const std::vector<int> saved = blob->shape();
    blob->Reshape(shape);
    DetectionOutputLayer<Dtype> layer(param);
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
    blob->Reshape(saved);
  };
  refused(this->loc_.get(), {1, 12});       // 3 priors' boxes
  refused(this->loc_.get(), {2, 16});       // 2 images, conf has 1
  refused(this->conf_.get(), {1, 15});      // 5 priors' scores
  refused(this->prior_.get(), {1, 2, 20});  // 5 priors
  refused(this->prior_.get(), {1, 1, 16});  // no variances
  refused(this->prior_.get(), {2, 2, 16});  // one per image
  refused(this->prior_.get(), {1, 2, 14});  // not whole boxes
}

TYPED_TEST(DetectionOutputLayerTest, FourthBottomRefused) {
  using Dtype = typename TypeParam::Dtype;
  DetectionOutputLayer<Dtype> layer(this->Param(kBase));
  Blob<Dtype> extra(std::vector<int>{1, 8});
  std::vector<Blob<Dtype>*> bottom = this->bottom_vec_;
  bottom.push_back(&extra);
  ExpectSetUpError<Dtype>(&layer, bottom, this->top_vec_, "4th bottom");
}

TYPED_TEST(DetectionOutputLayerTest, BackwardRefused) {
  using Dtype = typename TypeParam::Dtype;
  DetectionOutputLayer<Dtype> layer(this->Param(kBase));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const std::string message = ErrorMessageOf([&] {
    layer.Backward(this->top_vec_, {true, false, false}, this->bottom_vec_);
  });
  EXPECT_NE(message.find("detect"), std::string::npos) << message;
  EXPECT_NE(message.find("backward"), std::string::npos) << message;
}

TYPED_TEST(DetectionOutputLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("DetectionOutput");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "DetectionOutput");
}

// Two feature maps (4 x 4 and 2 x 2) of a 16 x 16 image, 3 priors per cell
// (min, sqrt(min * max), ratio 2), 3 classes, 2 images.
const char kSsdHead[] = R"(
name: 'ssd_head'
layer { name: 'data' type: 'Input' top: 'data'
        input_param { shape { dim: 2 dim: 3 dim: 16 dim: 16 } } }
layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'feat'
        convolution_param { num_output: 4 kernel_size: 3 stride: 4 pad: 1
                            weight_filler { type: 'gaussian' std: 0.5 } } }
layer { name: 'norm' type: 'Normalize' bottom: 'feat' top: 'feat_norm'
        norm_param { across_spatial: false channel_shared: false
                     scale_filler { type: 'constant' value: 20 } } }
layer { name: 'pool' type: 'Pooling' bottom: 'feat_norm' top: 'feat2'
        pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: 'loc1' type: 'Convolution' bottom: 'feat_norm' top: 'loc1'
        convolution_param { num_output: 12 kernel_size: 3 pad: 1
                            weight_filler { type: 'gaussian' std: 0.1 } } }
layer { name: 'loc1_perm' type: 'Permute' bottom: 'loc1' top: 'loc1_perm'
        permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: 'loc1_flat' type: 'Flatten' bottom: 'loc1_perm' top: 'loc1_flat' }
layer { name: 'conf1' type: 'Convolution' bottom: 'feat_norm' top: 'conf1'
        convolution_param { num_output: 9 kernel_size: 3 pad: 1
                            weight_filler { type: 'gaussian' std: 0.5 } } }
layer { name: 'conf1_perm' type: 'Permute' bottom: 'conf1' top: 'conf1_perm'
        permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: 'conf1_flat' type: 'Flatten' bottom: 'conf1_perm' top: 'conf1_flat' }
layer { name: 'priors1' type: 'PriorBox' bottom: 'feat_norm' bottom: 'data' top: 'priors1'
        prior_box_param { min_size: 4 max_size: 8 aspect_ratio: 2 flip: false
                          variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 } }
layer { name: 'loc2' type: 'Convolution' bottom: 'feat2' top: 'loc2'
        convolution_param { num_output: 12 kernel_size: 1
                            weight_filler { type: 'gaussian' std: 0.1 } } }
layer { name: 'loc2_perm' type: 'Permute' bottom: 'loc2' top: 'loc2_perm'
        permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: 'loc2_flat' type: 'Flatten' bottom: 'loc2_perm' top: 'loc2_flat' }
layer { name: 'conf2' type: 'Convolution' bottom: 'feat2' top: 'conf2'
        convolution_param { num_output: 9 kernel_size: 1
                            weight_filler { type: 'gaussian' std: 0.5 } } }
layer { name: 'conf2_perm' type: 'Permute' bottom: 'conf2' top: 'conf2_perm'
        permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: 'conf2_flat' type: 'Flatten' bottom: 'conf2_perm' top: 'conf2_flat' }
layer { name: 'priors2' type: 'PriorBox' bottom: 'feat2' bottom: 'data' top: 'priors2'
        prior_box_param { min_size: 8 max_size: 16 aspect_ratio: 2 flip: false clip: true
                          variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 } }
layer { name: 'mbox_loc' type: 'Concat' bottom: 'loc1_flat' bottom: 'loc2_flat' top: 'mbox_loc'
        concat_param { axis: 1 } }
layer { name: 'mbox_conf' type: 'Concat' bottom: 'conf1_flat' bottom: 'conf2_flat'
        top: 'mbox_conf' concat_param { axis: 1 } }
layer { name: 'mbox_priors' type: 'Concat' bottom: 'priors1' bottom: 'priors2'
        top: 'mbox_priors' concat_param { axis: 2 } }
layer { name: 'conf_reshape' type: 'Reshape' bottom: 'mbox_conf' top: 'conf_reshape'
        reshape_param { shape { dim: 0 dim: -1 dim: 3 } } }
layer { name: 'conf_softmax' type: 'Softmax' bottom: 'conf_reshape' top: 'conf_softmax'
        softmax_param { axis: 2 } }
layer { name: 'conf_flat' type: 'Flatten' bottom: 'conf_softmax' top: 'conf_flat' }
layer { name: 'detect' type: 'DetectionOutput' bottom: 'mbox_loc' bottom: 'conf_flat'
        bottom: 'mbox_priors' top: 'detections'
        detection_output_param { num_classes: 3 share_location: true background_label_id: 0
          nms_param { nms_threshold: 0.45 top_k: 30 } code_type: CENTER_SIZE
          keep_top_k: 12 confidence_threshold: 0.2 } }
)";

// Each image's rows: labels ascending, scores descending within a label,
// above the threshold; boxes of one image and label overlap by at most the
// NMS threshold; at most keep_top_k rows per image.
template <typename Dtype>
void ExpectDetectionInvariants(const Blob<Dtype>& detections) {
  ASSERT_EQ(detections.num_axes(), 4);
  ASSERT_EQ(detections.shape(3), 7);
  const int num_rows = detections.shape(2);
  const Dtype* rows = detections.cpu_data();
  std::vector<int> per_image(2, 0);
  for (int r = 0; r < num_rows; ++r) {
    const Dtype* row = rows + r * 7;
    ASSERT_TRUE(row[0] == 0 || row[0] == 1) << r;
    ++per_image[static_cast<int>(row[0])];
    EXPECT_TRUE(row[1] == 1 || row[1] == 2) << r;
    EXPECT_GT(row[2], 0.2) << r;
    EXPECT_LE(row[2], 1) << r;
    if (r == 0) continue;
    const Dtype* previous = row - 7;
    ASSERT_LE(previous[0], row[0]) << r;
    if (previous[0] != row[0]) continue;
    ASSERT_LE(previous[1], row[1]) << r;
    if (previous[1] == row[1]) {
      EXPECT_GE(previous[2], row[2]) << r;
    }
  }
  for (int count : per_image) EXPECT_LE(count, 12);
  for (int a = 0; a < num_rows; ++a) {
    for (int b = a + 1; b < num_rows; ++b) {
      const Dtype* p = rows + a * 7;
      const Dtype* q = rows + b * 7;
      if (p[0] != q[0] || p[1] != q[1]) continue;
      const DetectionBox box_p{float(p[3]), float(p[4]), float(p[5]), float(p[6])};
      const DetectionBox box_q{float(q[3]), float(q[4]), float(q[5]), float(q[6])};
      EXPECT_LE(ssd::JaccardOverlap(box_p, box_q), 0.45f) << a << " and " << b;
    }
  }
}

TYPED_TEST(DetectionOutputLayerTest, SsdHeadNetRuns) {
  using Dtype = typename TypeParam::Dtype;
  NetParameter param = ParseNet(kSsdHead);
  param.mutable_state()->set_phase(TEST);
  Context::set_random_seed(1701);
  Net<Dtype> net(param);
  EXPECT_EQ(net.blob_by_name("mbox_priors")->shape(), (std::vector<int>{1, 2, 240}));
  EXPECT_EQ(net.blob_by_name("mbox_loc")->shape(), (std::vector<int>{2, 240}));
  EXPECT_EQ(net.blob_by_name("conf_flat")->shape(), (std::vector<int>{2, 180}));
  FillGaussian(net.blob_by_name("data").get());
  net.Forward();
  const Blob<Dtype>& detections = *net.blob_by_name("detections");
  // Random weights give some detections (not the one-row-per-image filler).
  ASSERT_GT(detections.shape(2), 2);
  EXPECT_NE(detections.cpu_data()[1], -1);
  ExpectDetectionInvariants(detections);
}

}  // namespace
}  // namespace crema
