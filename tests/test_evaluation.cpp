// ConfusionMatrix and FindScoredBlobs (crema/evaluation.hpp): counts, shares
// and top-k worked out by hand, Accuracy's axis and ignore_label, bad labels,
// the report's lines and the PNG.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "crema/evaluation.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"
#include "test_scratch.hpp"

#ifdef CREMA_OPENCV
#include <opencv2/imgcodecs/imgcodecs.hpp>
#endif

namespace crema {
namespace {

// Five samples of three classes. Scores per sample (class 0, 1, 2) and the
// label:
//   0: (.7 .2 .1) label 0   top-1 right
//   1: (.1 .5 .4) label 2   predicted 1; 2 is second: right within top 2
//   2: (.2 .3 .5) label 2   right
//   3: (.6 .1 .3) label 1   predicted 0; 1 is last: wrong within top 2
//   4: (.3 .3 .4) label 1   predicted 2; 1 ties 0, one class higher: within top 2
struct Batch {
  Blob<float> scores{std::vector<int>{5, 3}};
  Blob<float> labels{std::vector<int>{5}};
  ScoredBlobs<float> blobs;
  Batch() {
    const std::vector<float> s{.7f, .2f, .1f, .1f, .5f, .4f, .2f, .3f, .5f,
                               .6f, .1f, .3f, .3f, .3f, .4f};
    const std::vector<float> l{0, 2, 2, 1, 1};
    std::copy(s.begin(), s.end(), scores.mutable_cpu_data());
    std::copy(l.begin(), l.end(), labels.mutable_cpu_data());
    blobs.layer = "accuracy";
    blobs.scores = &scores;
    blobs.labels = &labels;
  }
};

TEST(ConfusionMatrixTest, CountsSharesAndTopKByHand) {
  Batch batch;
  ConfusionMatrix matrix(3, 2);
  matrix.Add(batch.blobs);
  EXPECT_EQ(matrix.total(), 5);
  EXPECT_EQ(matrix.count(0, 0), 1);
  EXPECT_EQ(matrix.count(2, 1), 1);
  EXPECT_EQ(matrix.count(2, 2), 1);
  EXPECT_EQ(matrix.count(1, 0), 1);
  EXPECT_EQ(matrix.count(1, 2), 1);
  EXPECT_EQ(matrix.class_total(1), 2);
  EXPECT_DOUBLE_EQ(matrix.accuracy(), 2.0 / 5);
  EXPECT_DOUBLE_EQ(matrix.top_k_accuracy(), 4.0 / 5);
  EXPECT_DOUBLE_EQ(matrix.class_accuracy(0), 1);
  EXPECT_DOUBLE_EQ(matrix.class_accuracy(1), 0);
  EXPECT_DOUBLE_EQ(matrix.class_accuracy(2), 0.5);
  matrix.Add(batch.blobs);  // batches add up
  EXPECT_EQ(matrix.total(), 10);
  EXPECT_EQ(matrix.count(1, 2), 2);
  // A top k beyond the classes is all of them.
  ConfusionMatrix all(3, 10);
  all.Add(batch.blobs);
  EXPECT_EQ(all.top_k(), 3);
  EXPECT_DOUBLE_EQ(all.top_k_accuracy(), 1);
}

TEST(ConfusionMatrixTest, IgnoredLabelsSkipAndStrangersAreRefused) {
  Batch batch;
  batch.blobs.has_ignore_label = true;
  batch.blobs.ignore_label = 1;
  ConfusionMatrix matrix(3, 1);
  matrix.Add(batch.blobs);
  EXPECT_EQ(matrix.total(), 3);
  EXPECT_TRUE(std::isnan(matrix.class_accuracy(1)));  // no samples left
  batch.labels.mutable_cpu_data()[4] = 3;
  const std::string message = ErrorMessageOf([&] { matrix.Add(batch.blobs); });
  EXPECT_NE(message.find("label 3"), std::string::npos) << message;
  EXPECT_NE(message.find("'accuracy'"), std::string::npos) << message;
}

TEST(ConfusionMatrixTest, ScoresAlongAnInnerAxis) {
  // 1 x 2 classes x 3 positions: a segmentation net's scores.
  Blob<float> scores(std::vector<int>{1, 2, 3}), labels(std::vector<int>{1, 3});
  const std::vector<float> s{.9f, .1f, .2f, .1f, .9f, .8f};  // class 0 then class 1, per position
  std::copy(s.begin(), s.end(), scores.mutable_cpu_data());
  const std::vector<float> l{0, 0, 1};
  std::copy(l.begin(), l.end(), labels.mutable_cpu_data());
  ScoredBlobs<float> blobs;
  blobs.scores = &scores;
  blobs.labels = &labels;
  ConfusionMatrix matrix(2, 1);
  matrix.Add(blobs);
  EXPECT_EQ(matrix.count(0, 0), 1);
  EXPECT_EQ(matrix.count(0, 1), 1);
  EXPECT_EQ(matrix.count(1, 1), 1);
}

TEST(ConfusionMatrixTest, ReportNamesClassesAndRows) {
  Batch batch;
  ConfusionMatrix matrix(3, 2);
  matrix.Add(batch.blobs);
  const std::vector<std::string> lines = matrix.ReportLines({"cat", "dog", "bird"});
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  EXPECT_NE(all.find("  dog    0.0000  (0 of 2)"), std::string::npos) << all;
  EXPECT_NE(all.find("Top-1 accuracy: 0.4000 (2 of 5)"), std::string::npos) << all;
  EXPECT_NE(all.find("Top-2 accuracy: 0.8000 (4 of 5)"), std::string::npos) << all;
  EXPECT_NE(all.find("  bird   0 1 1"), std::string::npos) << all;
}

TEST(ConfusionMatrixTest, NetWithoutAccuracyIsAUserError) {
  NetParameter param;
  ReadProtoFromString(
      "name: 'plain' layer { name: 'in' type: 'Input' top: 'x' "
      "input_param { shape { dim: 1 dim: 3 } } }",
      "net", &param);
  Net<float> net(param);
  const std::string message = ErrorMessageOf([&] { FindScoredBlobs(net); });
  EXPECT_NE(message.find("no Accuracy layer"), std::string::npos) << message;
}

#ifdef CREMA_OPENCV
class ConfusionPngTest : public ScratchDirTest {};

TEST_F(ConfusionPngTest, WritesAPictureOfTheMatrix) {
  Batch batch;
  ConfusionMatrix matrix(3, 2);
  matrix.Add(batch.blobs);
  const std::string file = dir_ + "/confusion.png";
  WriteConfusionPng(matrix, {"cat", "dog", "bird"}, file);
  const cv::Mat image = cv::imread(file);
  ASSERT_FALSE(image.empty());
  EXPECT_GT(image.cols, 3 * 56);
  EXPECT_GT(image.rows, 3 * 56);
  // The right answer for class 0 (every one of its samples) is the darkest.
  const int cell = 56;
  const int left = image.cols - 16 - 3 * cell, top = 48;
  const cv::Vec3b corner = image.at<cv::Vec3b>(top + 3, left + 3);
  const cv::Vec3b empty = image.at<cv::Vec3b>(top + 3, left + cell + 3);
  EXPECT_LT(corner[2], 100);
  EXPECT_EQ(empty, cv::Vec3b(255, 255, 255));
}
#endif

}  // namespace
}  // namespace crema
