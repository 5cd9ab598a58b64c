// DetectionEvaluate and average precision: the three AP versions on curves
// worked out by hand; the layer's rows for two images (a hit, a repeat, a
// difficult box, a miss, an image that kept nothing) and the mAP they give.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "crema/detection/average_precision.hpp"
#include "crema/layers/detection_evaluate_layer.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

ssd::ClassTally Tally(int positives, const std::vector<ssd::ScoredDetection>& detections) {
  ssd::ClassTally tally;
  tally.positives = positives;
  tally.detections = detections;
  return tally;
}

// Miss, hit, hit (2 positives): precision 0, 1/2, 2/3 at recall 0, 1/2, 1.
// Integral: 1/2 * 1/2 + 2/3 * 1/2; MaxIntegral raises the first two to 2/3;
// 11point: 2/3 at every recall step.
TEST(AveragePrecisionTest, ThreeVersionsByHand) {
  const ssd::ClassTally tally = Tally(2, {{0.7f, 1, 0}, {0.9f, 0, 1}, {0.8f, 1, 0}});
  EXPECT_NEAR(ssd::AveragePrecision(tally, "Integral"), 0.25 + 1.0 / 3, 1e-9);
  EXPECT_NEAR(ssd::AveragePrecision(tally, "MaxIntegral"), 2.0 / 3, 1e-9);
  EXPECT_NEAR(ssd::AveragePrecision(tally, "11point"), 2.0 / 3, 1e-9);
}

// Hit, miss (2 positives): recall stops at 1/2; 11point counts precision 1
// at the six steps 0 to 0.5 and 0 at the five above.
TEST(AveragePrecisionTest, RecallThatStopsShort) {
  const ssd::ClassTally tally = Tally(2, {{0.9f, 1, 0}, {0.8f, 0, 1}, {0.85f, 0, 0}});
  EXPECT_NEAR(ssd::AveragePrecision(tally, "11point"), 6.0 / 11, 1e-9);
  EXPECT_NEAR(ssd::AveragePrecision(tally, "Integral"), 0.5, 1e-9);
  EXPECT_NEAR(ssd::AveragePrecision(tally, "MaxIntegral"), 0.5, 1e-9);
  EXPECT_EQ(ssd::AveragePrecision(Tally(0, {{0.9f, 0, 1}}), "Integral"), 0);
  EXPECT_EQ(ErrorMessageOf([&] { ssd::AveragePrecision(tally, "VOC"); }),
            "ap_version 'VOC': give 11point, MaxIntegral or Integral");
}

template <typename TypeParam>
class DetectionEvaluateLayerTest : public MultiDeviceTest<TypeParam> {};
TYPED_TEST_SUITE(DetectionEvaluateLayerTest, TestDtypesAndDevices);

// Image 0: label 1 at A, label 2 at B (difficult); image 1: label 1 at C.
// Detections: label 1 near A twice (a hit, then a repeat), label 2 on B
// (difficult, not evaluated: neither), label 1 far from C (a miss), and
// image 2's "nothing kept" row.
TYPED_TEST(DetectionEvaluateLayerTest, RowsForHitsRepeatsDifficultAndMisses) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> detections(std::vector<int>{1, 1, 5, 7}), truth(std::vector<int>{1, 1, 3, 8}), out;
  SetValues(&detections, {0, 1, 0.8f, 0.1f, 0.1f, 0.4f, 0.4f,    // repeat (lower score)
                          0, 1, 0.9f, 0.1f, 0.1f, 0.4f, 0.42f,   // hit
                          0, 2, 0.7f, 0.5f, 0.5f, 0.9f, 0.9f,    // on the difficult B
                          1, 1, 0.6f, 0.0f, 0.0f, 0.1f, 0.1f,    // miss
                          2, -1, -1, -1, -1, -1, -1});
  SetValues(&truth, {0, 1, 0, 0.1f, 0.1f, 0.4f, 0.4f, 0,
                     0, 2, 0, 0.5f, 0.5f, 0.9f, 0.9f, 1,
                     1, 1, 0, 0.6f, 0.6f, 0.9f, 0.9f, 0});
  LayerParameter param;
  param.mutable_detection_evaluate_param()->set_num_classes(3);
  param.mutable_detection_evaluate_param()->set_evaluate_difficult_gt(false);
  DetectionEvaluateLayer<Dtype> layer(param);
  const std::vector<Blob<Dtype>*> bottom{&detections, &truth}, top{&out};
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  const std::vector<std::vector<float>> expected = {
      {-1, 1, 2, -1, -1}, {-1, 2, 0, -1, -1}, {0, 1, 0.9f, 1, 0},
      {0, 1, 0.8f, 0, 1}, {0, 2, 0.7f, 0, 0}, {1, 1, 0.6f, 0, 1}};
  ASSERT_EQ(out.count(), 5 * static_cast<int>(expected.size()));
  for (size_t r = 0; r < expected.size(); ++r) {
    for (int k = 0; k < 5; ++k) {
      EXPECT_NEAR(out.cpu_data()[5 * r + k], expected[r][k], 1e-6) << "row " << r << " value " << k;
    }
  }
  // Label 1: hit, repeat, miss of 2 positives; label 2 has none: mAP is
  // label 1's AP, (1 x 1/2) by Integral.
  std::map<int, ssd::ClassTally> tallies;
  const std::vector<float> rows(out.cpu_data(), out.cpu_data() + out.count());
  ssd::AddEvaluationRows(rows.data(), out.count() / 5, &tallies);
  std::map<int, double> per_class;
  EXPECT_NEAR(ssd::MeanAveragePrecision(tallies, "Integral", &per_class), 0.5, 1e-6);
  EXPECT_EQ(per_class.size(), 1u);
}

TYPED_TEST(DetectionEvaluateLayerTest, RefusedSettingsAreNamed) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> detections(std::vector<int>{1, 1, 1, 7}), truth(std::vector<int>{1, 1, 1, 8}), out;
  LayerParameter param;
  param.set_name("eval");
  param.mutable_detection_evaluate_param()->set_num_classes(3);
  param.mutable_detection_evaluate_param()->set_name_size_file("sizes.txt");
  DetectionEvaluateLayer<Dtype> sized(param);
  ExpectSetUpError<Dtype>(&sized, {&detections, &truth}, {&out}, "name_size_file");
  param.mutable_detection_evaluate_param()->clear_name_size_file();
  param.mutable_detection_evaluate_param()->set_num_classes(0);
  DetectionEvaluateLayer<Dtype> no_classes(param);
  ExpectSetUpError<Dtype>(&no_classes, {&detections, &truth}, {&out}, "num_classes");
}

}  // namespace
}  // namespace crema
