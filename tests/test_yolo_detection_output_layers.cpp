// The YOLO forks' detection outputs (YoloDetectionOutput for YOLOv2's head,
// Yolov3DetectionOutput for YOLOv3's): a box worked by hand, random heads
// against the fork's decoding written out here (for one image, the fork's
// rows exactly), no detection, and the settings and shapes refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/yolo_detection_output_layer.hpp"
#include "crema/layers/yolov3_detection_output_layer.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class YoloDetectionTest : public MultiDeviceTest<TypeParam> {};
TYPED_TEST_SUITE(YoloDetectionTest, TestDtypesAndDevices);

LayerParameter DetectionParam(const std::string& text) {
  return ParseNet("layer { " + text + " }").layer(0);
}

double SigmoidOf(double x) { return 1 / (1 + std::exp(-x)); }

struct DetectionRow {
  double values[7];
};

template <typename Dtype>
std::vector<DetectionRow> RowsOf(const Blob<Dtype>& top) {
  std::vector<DetectionRow> rows(top.count() / 7);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int k = 0; k < 7; ++k) rows[r].values[k] = top.cpu_data()[r * 7 + k];
  }
  return rows;
}

// The fork's selection for one image: by descending confidence (stable),
// greedy, class-agnostic, overlap of centre-size boxes >= threshold.
std::vector<DetectionRow> ForkNms(std::vector<DetectionRow> candidates, double threshold) {
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const DetectionRow& a, const DetectionRow& b) { return a.values[2] > b.values[2]; });
  std::vector<DetectionRow> kept;
  for (const DetectionRow& c : candidates) {
    bool suppressed = false;
    for (const DetectionRow& k : kept) {
      const double across = std::min(c.values[5], k.values[5]) - std::max(c.values[3], k.values[3]);
      const double down = std::min(c.values[6], k.values[6]) - std::max(c.values[4], k.values[4]);
      if (across < 0 || down < 0) continue;
      const double inter = across * down;
      const double area_c = (c.values[5] - c.values[3]) * (c.values[6] - c.values[4]);
      const double area_k = (k.values[5] - k.values[3]) * (k.values[6] - k.values[4]);
      if (inter / (area_c + area_k - inter) >= threshold) suppressed = true;
    }
    if (!suppressed) kept.push_back(c);
  }
  return kept;
}

void ExpectDetectionRowsNear(const std::vector<DetectionRow>& got,
                             const std::vector<DetectionRow>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t r = 0; r < got.size(); ++r) {
    for (int k = 0; k < 7; ++k) {
      EXPECT_NEAR(got[r].values[k], expected[r].values[k], 2e-5) << "row " << r << " col " << k;
    }
  }
}

const char kV3[] =
    "name: 'det' type: 'Yolov3DetectionOutput' bottom: 'a' bottom: 'b' top: 'd' "
    "yolov3_detection_output_param { num_classes: 2 num_box: 2 confidence_threshold: 0.3 "
    "nms_threshold: 0.45 biases: [10, 14, 23, 27, 37, 58, 81, 82] "
    "anchors_scale: 32 anchors_scale: 16 mask_group_num: 2 mask: 2 mask: 3 mask: 0 mask: 1 } ";

// One cell, one anchor of each scale: the centre (x + sig(tx)) / S, the size
// exp(tw) * anchor / input size, each class's sig(logit) * sig(objectness).
TYPED_TEST(YoloDetectionTest, Yolov3BoxByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(std::vector<int>{1, 14, 1, 1}), b(std::vector<int>{1, 14, 2, 2}), top;
  cpu_set(a.count(), Dtype(-20), a.mutable_cpu_data());  // nothing confident
  cpu_set(b.count(), Dtype(-20), b.mutable_cpu_data());
  Dtype* head = a.mutable_cpu_data();
  // anchor 0 of scale 0 (biases pair 2: 37 x 58 at stride 32, input 32)
  head[0] = 0;              // tx: centre 0.5
  head[1] = std::log(3.0);  // ty: sig = 0.75
  head[2] = 0;              // tw
  head[3] = std::log(0.5);  // th
  head[4] = 20;             // objectness 1
  head[5] = 0;              // class 0: 0.5
  head[6] = 2;              // class 1: sig(2)
  std::vector<Blob<Dtype>*> bottom{&a, &b}, tops{&top};
  Yolov3DetectionOutputLayer<Dtype> layer(DetectionParam(kV3));
  layer.SetUp(bottom, tops);
  layer.Forward(bottom, tops);
  const double w = 37.0 / 32, h = 0.5 * 58 / 32;
  // The same box twice (overlap 1): only the better class stays.
  ExpectDetectionRowsNear(RowsOf(top), {{{0, 2, SigmoidOf(2) * SigmoidOf(20), 0.5 - w / 2,
                                          0.75 - h / 2, 0.5 + w / 2, 0.75 + h / 2}}});
}

TYPED_TEST(YoloDetectionTest, Yolov3RandomHeadsMatchTheForksDecoding) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  Blob<Dtype> a(std::vector<int>{1, 14, 2, 2}), b(std::vector<int>{1, 14, 4, 4}), top;
  FillGaussian(&a);
  FillGaussian(&b);
  std::vector<Blob<Dtype>*> bottom{&a, &b}, tops{&top};
  Yolov3DetectionOutputLayer<Dtype> layer(DetectionParam(kV3));
  layer.SetUp(bottom, tops);
  layer.Forward(bottom, tops);
  const double biases[] = {10, 14, 23, 27, 37, 58, 81, 82};
  const int mask[] = {2, 3, 0, 1}, stride[] = {32, 16};
  std::vector<DetectionRow> candidates;
  for (int t = 0; t < 2; ++t) {
    const Blob<Dtype>& blob = *bottom[t];
    const int side = blob.shape(3);
    for (int y = 0; y < side; ++y) {
      for (int x = 0; x < side; ++x) {
        for (int n = 0; n < 2; ++n) {
          auto at = [&](int k) { return double(blob.data_at(0, n * 7 + k, y, x)); };
          const int anchor = mask[t * 2 + n];
          const double cx = (x + SigmoidOf(at(0))) / side, cy = (y + SigmoidOf(at(1))) / side;
          const double w = std::exp(at(2)) * biases[2 * anchor] / (side * stride[t]);
          const double h = std::exp(at(3)) * biases[2 * anchor + 1] / (side * stride[t]);
          for (int c = 0; c < 2; ++c) {
            const double conf = SigmoidOf(at(5 + c)) * SigmoidOf(at(4));
            if (conf > 0.3) {
              candidates.push_back(
                  {{0, double(c + 1), conf, cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2}});
            }
          }
        }
      }
    }
  }
  const std::vector<DetectionRow> expected = ForkNms(candidates, 0.45);
  ASSERT_GT(expected.size(), 1u) << "the case should keep several boxes";
  ExpectDetectionRowsNear(RowsOf(top), expected);
}

const char kV2[] =
    "name: 'det' type: 'YoloDetectionOutput' bottom: 'a' top: 'd' "
    "yolo_detection_output_param { num_classes: 3 num_box: 2 confidence_threshold: 0.2 "
    "nms_threshold: 0.4 biases: 1.08 biases: 1.19 biases: 3.42 biases: 4.41 } ";

TYPED_TEST(YoloDetectionTest, YoloV2RandomHeadMatchesTheForksDecoding) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(7);
  Blob<Dtype> a(std::vector<int>{1, 16, 3, 3}), top;
  FillGaussian(&a);
  std::vector<Blob<Dtype>*> bottom{&a}, tops{&top};
  YoloDetectionOutputLayer<Dtype> layer(DetectionParam(kV2));
  layer.SetUp(bottom, tops);
  layer.Forward(bottom, tops);
  const double biases[] = {1.08, 1.19, 3.42, 4.41};
  std::vector<DetectionRow> candidates;
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 3; ++x) {
      for (int n = 0; n < 2; ++n) {
        auto at = [&](int k) { return double(a.data_at(0, n * 8 + k, y, x)); };
        double largest = std::max({at(5), at(6), at(7)}), sum = 0, best = -1;
        int label = 0;
        for (int c = 0; c < 3; ++c) sum += std::exp(at(5 + c) - largest);
        for (int c = 0; c < 3; ++c) {
          const double p = std::exp(at(5 + c) - largest) / sum;
          if (p > best) best = p, label = c;
        }
        const double conf = SigmoidOf(at(4)) * best;
        if (conf < 0.2) continue;
        const double cx = (x + SigmoidOf(at(0))) / 3, cy = (y + SigmoidOf(at(1))) / 3;
        const double w = std::exp(at(2)) * biases[2 * n] / 3,
                     h = std::exp(at(3)) * biases[2 * n + 1] / 3;
        candidates.push_back(
            {{0, double(label + 1), conf, cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2}});
      }
    }
  }
  const std::vector<DetectionRow> expected = ForkNms(candidates, 0.4);
  ASSERT_GT(expected.size(), 1u);
  ExpectDetectionRowsNear(RowsOf(top), expected);
}

// Nothing above the threshold: the forks' one row of -1 per image, its
// index first.
TYPED_TEST(YoloDetectionTest, NothingKeptGivesOneRowPerImage) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(std::vector<int>{2, 16, 3, 3}), top;
  cpu_set(a.count(), Dtype(-30), a.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom{&a}, tops{&top};
  YoloDetectionOutputLayer<Dtype> layer(DetectionParam(kV2));
  layer.SetUp(bottom, tops);
  layer.Forward(bottom, tops);
  ExpectDetectionRowsNear(RowsOf(top),
                          {{{0, -1, -1, -1, -1, -1, -1}}, {{1, -1, -1, -1, -1, -1, -1}}});
}

TYPED_TEST(YoloDetectionTest, BadSettingsAndShapesAreRefusedNamingTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(std::vector<int>{1, 14, 2, 2}), b(std::vector<int>{1, 14, 4, 4}), top;
  std::vector<Blob<Dtype>*> bottom{&a, &b}, tops{&top};
  const std::string base(kV3);
  for (const std::string& swap :
       {std::string("num_classes: 2 "), std::string("mask: 3 mask: 0 mask: 1 }"),
        std::string("anchors_scale: 16 ")}) {
    std::string text = base;
    const std::string replacement =
        swap == "mask: 3 mask: 0 mask: 1 }" ? "mask: 9 mask: 0 mask: 1 }" : "";
    text.replace(text.find(swap), swap.size(), replacement);
    Yolov3DetectionOutputLayer<Dtype> layer(DetectionParam(text));
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom, tops);
  }
  Blob<Dtype> oblong(std::vector<int>{1, 14, 4, 5});
  std::vector<Blob<Dtype>*> bad_shape{&a, &oblong};
  Yolov3DetectionOutputLayer<Dtype> layer(DetectionParam(kV3));
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bad_shape, tops);
  Blob<Dtype> wrong_channels(std::vector<int>{1, 15, 3, 3});
  std::vector<Blob<Dtype>*> v2_bottom{&wrong_channels};
  YoloDetectionOutputLayer<Dtype> v2(DetectionParam(kV2));
  ExpectSetUpThrowsNamingLayer<Dtype>(&v2, v2_bottom, tops);
}

}  // namespace
}  // namespace crema
