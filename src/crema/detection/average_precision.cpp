#include "crema/detection/average_precision.hpp"

#include <algorithm>

#include "crema/common.hpp"

namespace crema {
namespace ssd {

namespace {

// Precision and recall after each detection, by descending score (the
// order among equal scores is the order given).
void Curve(const ClassTally& tally, std::vector<double>* precision, std::vector<double>* recall) {
  std::vector<ScoredDetection> sorted = tally.detections;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ScoredDetection& a, const ScoredDetection& b) {
                     return a.score > b.score;
                   });
  int tp = 0, fp = 0;
  for (const ScoredDetection& detection : sorted) {
    tp += detection.tp;
    fp += detection.fp;
    if (detection.tp == 0 && detection.fp == 0) continue;  // ignored (difficult)
    precision->push_back(double(tp) / (tp + fp));
    recall->push_back(double(tp) / tally.positives);
  }
}

}  // namespace

double AveragePrecision(const ClassTally& tally, const std::string& version) {
  CREMA_REQUIRE(version == "11point" || version == "MaxIntegral" || version == "Integral",
                "ap_version '" << version << "': give 11point, MaxIntegral or Integral");
  if (tally.positives == 0) return 0;
  std::vector<double> precision, recall;
  Curve(tally, &precision, &recall);
  const size_t n = precision.size();
  if (version == "11point") {
    double sum = 0;
    for (int step = 0; step <= 10; ++step) {
      double best = 0;
      for (size_t i = 0; i < n; ++i) {
        if (recall[i] >= step / 10.0 - 1e-12) best = std::max(best, precision[i]);
      }
      sum += best;
    }
    return sum / 11;
  }
  double area = 0, previous_recall = 0;
  if (version == "Integral") {
    for (size_t i = 0; i < n; ++i) {
      area += precision[i] * (recall[i] - previous_recall);
      previous_recall = recall[i];
    }
    return area;
  }
  // MaxIntegral: each precision raised to the best at any later point.
  std::vector<double> raised(precision);
  for (size_t i = n; i-- > 1;) raised[i - 1] = std::max(raised[i - 1], raised[i]);
  for (size_t i = 0; i < n; ++i) {
    area += raised[i] * (recall[i] - previous_recall);
    previous_recall = recall[i];
  }
  return area;
}

void AddEvaluationRows(const float* rows, int num_rows, std::map<int, ClassTally>* tallies) {
  for (int r = 0; r < num_rows; ++r) {
    const float* row = rows + 5 * r;
    const int label = static_cast<int>(row[1]);
    if (row[0] == -1) {
      (*tallies)[label].positives += static_cast<int>(row[2]);
      continue;
    }
    (*tallies)[label].detections.push_back(
        {row[2], static_cast<int>(row[3]), static_cast<int>(row[4])});
  }
}

double MeanAveragePrecision(const std::map<int, ClassTally>& tallies, const std::string& version,
                            std::map<int, double>* per_class) {
  double sum = 0;
  int classes = 0;
  for (const auto& [label, tally] : tallies) {
    if (tally.positives == 0) continue;
    const double ap = AveragePrecision(tally, version);
    if (per_class) (*per_class)[label] = ap;
    sum += ap;
    ++classes;
  }
  return classes ? sum / classes : 0;
}

}  // namespace ssd
}  // namespace crema
