// What training prints, driven by an injected clock: the rate in iterations
// and images per second, the time left, the outputs; and the test means.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crema/net.hpp"
#include "crema/reporter.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// A net fed by an Input layer: `batch` rows of 3 values, a target of 2.
NetParameter InputFedNet(int batch) {
  const std::string rows = std::to_string(batch);
  return ParseNet(
      "name: 'input_fed' state { phase: TRAIN }"
      "layer { name: 'input' type: 'Input' top: 'data' top: 'target'"
      "  input_param { shape { dim: " + rows + " dim: 3 } shape { dim: " + rows + " dim: 2 } } }"
      "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip'"
      "  inner_product_param { num_output: 2 weight_filler { type: 'constant' value: 0.5 } } }"
      "layer { name: 'loss' type: 'EuclideanLoss' bottom: 'ip' bottom: 'target' top: 'loss' }");
}

SolverParameter Settings(const std::string& text) {
  SolverParameter param;
  ReadProtoFromString(text, "solver", &param);
  return param;
}

class ReporterTest : public ::testing::Test {
 protected:
  // Runs iterations first..last, the clock advancing `step` seconds before
  // each one's report.
  void Run(TrainingReporter<float>* reporter, Net<float>* net, int first, int last,
           double step) {
    for (int iter = first; iter <= last; ++iter) {
      now_ += step;
      float loss = 0;
      net->Forward(&loss);
      reporter->Iterated(iter, loss, *net);
    }
  }

  // The number before `unit` in the last line that has it.
  double Figure(const std::string& unit) const {
    for (auto line = lines_.rbegin(); line != lines_.rend(); ++line) {
      const size_t at = line->find(unit);
      if (at == std::string::npos) continue;
      const size_t start = line->find_last_of(" (", at - 2) + 1;
      return std::stod(line->substr(start, at - start));
    }
    ADD_FAILURE() << "no line with '" << unit << "' in:\n" << Printed();
    return -1;
  }

  std::string Printed() const {
    std::string all;
    for (const std::string& line : lines_) all += line + "\n";
    return all;
  }

  Clock clock_ = [this] { return now_; };
  LineSink sink_ = [this](const std::string& line) { lines_.push_back(line); };
  double now_ = 100;
  std::vector<std::string> lines_;
};

TEST_F(ReporterTest, ImagesPerSecondOfAnInputFedNetIsBatchTimesIterationsOverElapsed) {
  const int batch = 5;
  Net<float> net(InputFedNet(batch));
  ASSERT_EQ(net.batch_size(), batch);
  TrainingReporter<float> reporter(Settings("display: 10 max_iter: 100"), 1, true, clock_, sink_);
  reporter.Start(0);
  Run(&reporter, &net, 0, 0, 0.25);  // iteration 0 displays; no rate yet
  EXPECT_EQ(Printed().find("images/s"), std::string::npos) << Printed();
  Run(&reporter, &net, 1, 10, 0.25);
  const double elapsed = 10 * 0.25, iterations = 10;
  EXPECT_DOUBLE_EQ(Figure("images/s"), batch * iterations / elapsed) << Printed();
  EXPECT_DOUBLE_EQ(Figure("iter/s"), iterations / elapsed) << Printed();
  // 90 iterations left at 4 per second: 22 s.
  EXPECT_NE(Printed().find("ETA 0:00:22"), std::string::npos) << Printed();
}

TEST_F(ReporterTest, EverySolverAndEveryAccumulatedBatchCounts) {
  const int batch = 5, iter_size = 2, solvers = 3;
  Net<float> net(InputFedNet(batch));
  TrainingReporter<float> reporter(Settings("display: 10 max_iter: 100 iter_size: 2"), solvers,
                                   true, clock_, sink_);
  reporter.Start(0);
  Run(&reporter, &net, 0, 10, 0.5);
  const double elapsed = 10 * 0.5, iterations = 10;
  EXPECT_DOUBLE_EQ(Figure("images/s"), batch * iter_size * solvers * iterations / elapsed)
      << Printed();
}

TEST_F(ReporterTest, AnInputReshapedBetweenIterationsIsCountedAsItRan) {
  Net<float> net(InputFedNet(5));
  TrainingReporter<float> reporter(Settings("display: 10 max_iter: 100"), 1, true, clock_, sink_);
  reporter.Start(0);
  Run(&reporter, &net, 0, 10, 1.0);
  // The caller feeds 8 rows from now on.
  net.input_blobs()[0]->Reshape(std::vector<int>{8, 3});
  net.input_blobs()[1]->Reshape(std::vector<int>{8, 2});
  net.Reshape();
  Run(&reporter, &net, 11, 20, 1.0);
  EXPECT_DOUBLE_EQ(Figure("images/s"), 8 * 10 / 10.0) << Printed();
}

TEST_F(ReporterTest, PrintsTheLossAndEachOutputWithItsWeightedLoss) {
  Net<float> net(InputFedNet(2));
  // Targets 0 and every output 1.5 (0.5 x three 1s): loss = 1/(2N) x N x 2 x 2.25.
  for (int i = 0; i < net.input_blobs()[0]->count(); ++i) {
    net.input_blobs()[0]->mutable_cpu_data()[i] = 1;
  }
  for (int i = 0; i < net.input_blobs()[1]->count(); ++i) {
    net.input_blobs()[1]->mutable_cpu_data()[i] = 0;
  }
  TrainingReporter<float> reporter(Settings("display: 1 max_iter: 10"), 1, true, clock_, sink_);
  reporter.Start(0);
  Run(&reporter, &net, 0, 0, 1.0);
  EXPECT_NE(Printed().find("Iteration 0 ("), std::string::npos) << Printed();
  EXPECT_NE(Printed().find("loss = 2.25"), std::string::npos) << Printed();
  EXPECT_NE(Printed().find("    Train net output #0: loss = 2.25 (* 1 = 2.25 loss)"),
            std::string::npos)
      << Printed();
  EXPECT_FLOAT_EQ(reporter.smoothed_loss(), 2.25f);
}

TEST_F(ReporterTest, OnlyRankZeroPrintsButEverySolverSmooths) {
  Net<float> net(InputFedNet(2));
  TrainingReporter<float> reporter(Settings("display: 1 max_iter: 10 average_loss: 3"), 2, false,
                                   clock_, sink_);
  reporter.Start(0);
  Run(&reporter, &net, 0, 4, 1.0);
  reporter.Finished(5, 1.0f);
  EXPECT_TRUE(lines_.empty()) << Printed();
  EXPECT_GT(reporter.smoothed_loss(), 0);
}

TEST_F(ReporterTest, SmoothedLossIsTheMeanOfTheLastAverageLossIterations) {
  Net<float> net(InputFedNet(2));
  TrainingReporter<float> reporter(Settings("display: 0 average_loss: 2"), 1, true, clock_,
                                   sink_);
  reporter.Start(0);
  reporter.Iterated(0, 1.0f, net);
  EXPECT_FLOAT_EQ(reporter.smoothed_loss(), 1.0f);
  reporter.Iterated(1, 3.0f, net);
  EXPECT_FLOAT_EQ(reporter.smoothed_loss(), 2.0f);
  reporter.Iterated(2, 5.0f, net);  // 1 leaves the window
  EXPECT_FLOAT_EQ(reporter.smoothed_loss(), 4.0f);
  EXPECT_TRUE(lines_.empty()) << "display: 0 prints nothing\n" << Printed();
}

TEST_F(ReporterTest, OutputMeansAveragesOverBatches) {
  Net<float> net(InputFedNet(2));
  OutputMeans<float> means;
  for (float target : {0.f, 1.5f}) {
    for (int i = 0; i < net.input_blobs()[0]->count(); ++i) {
      net.input_blobs()[0]->mutable_cpu_data()[i] = 1;
    }
    for (int i = 0; i < net.input_blobs()[1]->count(); ++i) {
      net.input_blobs()[1]->mutable_cpu_data()[i] = target;
    }
    net.Forward();
    means.Add(net);
  }
  EXPECT_EQ(means.batches(), 2);
  ASSERT_EQ(means.Means().size(), 1u);
  EXPECT_FLOAT_EQ(means.Means()[0], (2.25f + 0.f) / 2);
  means.Report(net, "Test net output", sink_);
  EXPECT_NE(Printed().find("    Test net output #0: loss = 1.125 (* 1 = 1.125 loss)"),
            std::string::npos)
      << Printed();
}

// A DetectionEvaluate output is summed over batches and scored as mAP,
// never averaged: a hit, then (next batch) a miss at the same score, of two
// ground truths: precision 1 then 1/2, recall stopping at 1/2.
TEST(OutputMeansTest, DetectionEvaluationIsScoredAsMeanAveragePrecision) {
  Net<float> net(ParseNet(
      "name: 'eval' state { phase: TEST }"
      "layer { name: 'input' type: 'Input' top: 'det' top: 'gt'"
      "  input_param { shape { dim: 1 dim: 1 dim: 1 dim: 7 } shape { dim: 1 dim: 1 dim: 1 dim: 8 } } }"
      "layer { name: 'eval' type: 'DetectionEvaluate' bottom: 'det' bottom: 'gt' top: 'detection_eval'"
      "  detection_evaluate_param { num_classes: 2 } }"));
  OutputMeans<float> means({"Integral", "11point"}, true);
  const float truth[8] = {0, 1, 0, 0.1f, 0.1f, 0.4f, 0.4f, 0};
  const float hit[7] = {0, 1, 0.9f, 0.1f, 0.1f, 0.4f, 0.4f};
  const float miss[7] = {0, 1, 0.9f, 0.6f, 0.6f, 0.9f, 0.9f};
  for (const float* detection : {hit, miss}) {
    std::copy(detection, detection + 7, net.blob_by_name("det")->mutable_cpu_data());
    std::copy(truth, truth + 8, net.blob_by_name("gt")->mutable_cpu_data());
    net.Forward();
    means.Add(net);
  }
  std::vector<std::string> lines;
  means.Report(net, "Test net output", [&](const std::string& line) { lines.push_back(line); });
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "    Test net output #0: detection_eval = 0.5 (mAP, Integral)");
  EXPECT_EQ(lines[1], "        class 1: AP 0.5 (Integral)");
  EXPECT_EQ(lines[2], "    Test net output #0: detection_eval = 0.545455 (mAP, 11point)");
}

}  // namespace
}  // namespace crema
