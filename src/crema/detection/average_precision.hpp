// Detection scores as VOC scores them: each detection, by descending score,
// is a true positive when it overlaps an unclaimed ground truth of its class
// by at least a threshold, else a false positive; a class's average
// precision summarises its precision-recall curve. The versions are the SSD
// fork's ap_version values:
//   "11point"     VOC2007: the mean, over recall 0, 0.1, ..., 1, of the
//                 highest precision at that recall or above;
//   "MaxIntegral" VOC2010 on: the area under the curve with each precision
//                 raised to the highest at any greater recall;
//   "Integral"    the area under the curve as it is (precision times each
//                 step of recall).
#ifndef CREMA_DETECTION_AVERAGE_PRECISION_HPP_
#define CREMA_DETECTION_AVERAGE_PRECISION_HPP_

#include <map>
#include <string>
#include <vector>

namespace crema {
namespace ssd {

// One scored detection's verdict: tp and fp are 0 or 1; both 0 for a
// detection matched to a difficult ground truth that is not evaluated.
struct ScoredDetection {
  float score = 0;
  int tp = 0, fp = 0;
};

// What one class collected over a test: its positives and its detections.
struct ClassTally {
  int positives = 0;
  std::vector<ScoredDetection> detections;
};

// The average precision of one class (0 without positives); `version` is
// one of the three above, anything else is an error naming it.
double AveragePrecision(const ClassTally& tally, const std::string& version);

// DetectionEvaluate's rows (5 values each: -1, label, positives, -1, -1 per
// class; then image, label, score, tp, fp per detection) added to `tallies`.
void AddEvaluationRows(const float* rows, int num_rows, std::map<int, ClassTally>* tallies);

// The mean of the classes' average precisions (classes with positives).
double MeanAveragePrecision(const std::map<int, ClassTally>& tallies, const std::string& version,
                            std::map<int, double>* per_class = nullptr);

}  // namespace ssd
}  // namespace crema

#endif  // CREMA_DETECTION_AVERAGE_PRECISION_HPP_
