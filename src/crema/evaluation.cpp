#include "crema/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "crema/util/io.hpp"

#ifdef CREMA_OPENCV
#include <opencv2/core/core.hpp>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <opencv2/imgproc/imgproc.hpp>
#endif

namespace crema {

namespace {

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / whole : std::numeric_limits<double>::quiet_NaN();
}

std::string NameOf(const std::vector<std::string>& names, int c) {
  return c < static_cast<int>(names.size()) ? names[c] : std::to_string(c);
}

std::string Fixed(double value, int digits) {
  if (std::isnan(value)) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << value;
  return os.str();
}

}  // namespace

template <typename Dtype>
ScoredBlobs<Dtype> FindScoredBlobs(const Net<Dtype>& net) {
  for (size_t i = 0; i < net.layers().size(); ++i) {
    const LayerParameter& param = net.layers()[i]->layer_param();
    if (param.type() != "Accuracy") continue;
    ScoredBlobs<Dtype> blobs;
    blobs.layer = param.name();
    blobs.scores = net.bottom_vecs()[i][0];
    blobs.labels = net.bottom_vecs()[i][1];
    blobs.axis = blobs.scores->CanonicalAxisIndex(param.accuracy_param().axis());
    blobs.has_ignore_label = param.accuracy_param().has_ignore_label();
    blobs.ignore_label = param.accuracy_param().ignore_label();
    return blobs;
  }
  CREMA_FAIL("net " << net.name()
                    << " has no Accuracy layer: the classifier's scores and labels are the "
                       "bottoms of one (scores first, then labels)");
}

ConfusionMatrix::ConfusionMatrix(int classes, int top_k)
    : classes_(classes),
      top_k_(std::min(top_k, classes)),
      counts_(static_cast<size_t>(classes) * classes, 0) {
  CHECK_GE(classes, 1);
  CHECK_GE(top_k, 1);
}

template <typename Dtype>
void ConfusionMatrix::Add(const ScoredBlobs<Dtype>& blobs) {
  const Blob<Dtype>& scores = *blobs.scores;
  const int outer = scores.count(0, blobs.axis), inner = scores.count(blobs.axis + 1);
  CREMA_REQUIRE(scores.shape(blobs.axis) == classes_,
                "layer '" << blobs.layer << "': the scores have " << scores.shape(blobs.axis)
                          << " classes, the first batch had " << classes_);
  CREMA_REQUIRE(blobs.labels->count() == outer * inner,
                "layer '" << blobs.layer << "': " << blobs.labels->count() << " labels for "
                          << outer * inner << " score vectors");
  const Dtype* score = scores.cpu_data();
  const Dtype* label = blobs.labels->cpu_data();
  for (int i = 0; i < outer; ++i) {
    for (int j = 0; j < inner; ++j) {
      const int truth = static_cast<int>(label[i * inner + j]);
      if (blobs.has_ignore_label && truth == blobs.ignore_label) continue;
      CREMA_REQUIRE(truth >= 0 && truth < classes_ && label[i * inner + j] == truth,
                    "layer '" << blobs.layer << "': label " << label[i * inner + j]
                              << " is not a class in [0, " << classes_ << ")");
      const auto at = [&](int c) { return score[(i * classes_ + c) * inner + j]; };
      int predicted = 0, higher = 0;
      for (int c = 0; c < classes_; ++c) {
        if (at(c) > at(predicted)) predicted = c;
        if (at(c) > at(truth)) ++higher;
      }
      ++counts_[truth * classes_ + predicted];
      ++total_;
      if (higher < top_k_) ++top_k_right_;
    }
  }
}

int64_t ConfusionMatrix::class_total(int truth) const {
  int64_t sum = 0;
  for (int c = 0; c < classes_; ++c) sum += count(truth, c);
  return sum;
}

int64_t ConfusionMatrix::right() const {
  int64_t sum = 0;
  for (int c = 0; c < classes_; ++c) sum += count(c, c);
  return sum;
}

double ConfusionMatrix::accuracy() const { return Share(right(), total_); }

double ConfusionMatrix::top_k_accuracy() const { return Share(top_k_right_, total_); }

double ConfusionMatrix::class_accuracy(int truth) const {
  return Share(count(truth, truth), class_total(truth));
}

std::vector<std::string> ConfusionMatrix::ReportLines(const std::vector<std::string>& names) const {
  std::vector<std::string> lines;
  size_t width = 5;
  for (int c = 0; c < classes_; ++c) width = std::max(width, NameOf(names, c).size());
  const auto padded = [width](const std::string& text) {
    return text + std::string(width - std::min(width, text.size()), ' ');
  };
  lines.push_back("Per-class accuracy:");
  for (int c = 0; c < classes_; ++c) {
    lines.push_back("  " + padded(NameOf(names, c)) + "  " + Fixed(class_accuracy(c), 4) + "  (" +
                    std::to_string(count(c, c)) + " of " + std::to_string(class_total(c)) + ")");
  }
  lines.push_back("Top-1 accuracy: " + Fixed(accuracy(), 4) + " (" + std::to_string(right()) +
                  " of " + std::to_string(total_) + ")");
  lines.push_back("Top-" + std::to_string(top_k_) + " accuracy: " + Fixed(top_k_accuracy(), 4) +
                  " (" + std::to_string(top_k_right_) + " of " + std::to_string(total_) + ")");
  lines.push_back("Confusion matrix (a row per true class, a column per predicted class):");
  size_t cell = std::to_string(classes_ - 1).size();
  for (int64_t value : counts_) cell = std::max(cell, std::to_string(value).size());
  const auto right_aligned = [cell](const std::string& text) {
    return std::string(cell + 1 - std::min(cell + 1, text.size()), ' ') + text;
  };
  std::string header = "  " + std::string(width, ' ') + " ";
  for (int c = 0; c < classes_; ++c) header += right_aligned(std::to_string(c));
  lines.push_back(header);
  for (int t = 0; t < classes_; ++t) {
    std::string row = "  " + padded(NameOf(names, t)) + " ";
    for (int c = 0; c < classes_; ++c) row += right_aligned(std::to_string(count(t, c)));
    lines.push_back(row);
  }
  return lines;
}

template <typename Dtype>
ConfusionMatrix EvaluateClassifier(Net<Dtype>* net, int iterations, int top_k) {
  CREMA_REQUIRE(iterations > 0, "evaluate: iterations must be positive, got " << iterations);
  CREMA_REQUIRE(top_k > 0, "evaluate: top_k must be positive, got " << top_k);
  const ScoredBlobs<Dtype> blobs = FindScoredBlobs(*net);  // shaped when the net was set up
  ConfusionMatrix matrix(blobs.scores->shape(blobs.axis), top_k);
  for (int i = 0; i < iterations; ++i) {
    net->Forward();
    matrix.Add(blobs);
  }
  return matrix;
}

#ifdef CREMA_OPENCV
namespace {

// White for 0, deep blue for 1 (BGR).
cv::Scalar Shade(double share) {
  const double s = std::isnan(share) ? 0 : share;
  return cv::Scalar(255 - 90 * s, 255 - 200 * s, 255 - 235 * s);
}

void Text(cv::Mat* image, const std::string& text, cv::Point at, double scale, cv::Scalar colour) {
  cv::putText(*image, text, at, cv::FONT_HERSHEY_SIMPLEX, scale, colour, 1, cv::LINE_AA);
}

cv::Size TextSize(const std::string& text, double scale) {
  int baseline = 0;
  return cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, scale, 1, &baseline);
}

}  // namespace

void WriteConfusionPng(const ConfusionMatrix& matrix, const std::vector<std::string>& names,
                       const std::string& filename) {
  const int k = matrix.classes();
  const int cell = std::max(4, std::min(56, 720 / k));
  const double scale = 0.4;
  const bool labelled = cell >= 14;  // names and indices fit beside rows this tall
  int left = 10;
  if (labelled) {
    for (int c = 0; c < k; ++c) left = std::max(left, TextSize(NameOf(names, c), scale).width + 16);
  }
  const int top = 48, bottom = 40, right = 16;
  cv::Mat image(top + k * cell + bottom, left + k * cell + right, CV_8UC3, cv::Scalar::all(255));
  Text(&image, "Confusion matrix: row = true class, column = predicted", cv::Point(8, 18), 0.45,
       cv::Scalar::all(0));
  for (int t = 0; t < k; ++t) {
    const double row_total = static_cast<double>(matrix.class_total(t));
    for (int p = 0; p < k; ++p) {
      const double share = row_total > 0 ? matrix.count(t, p) / row_total : 0;
      const cv::Rect box(left + p * cell, top + t * cell, cell, cell);
      cv::rectangle(image, box, Shade(share), cv::FILLED);
      cv::rectangle(image, box, cv::Scalar::all(200), 1);
      const std::string count = std::to_string(matrix.count(t, p));
      const cv::Size size = TextSize(count, scale);
      if (cell >= 28 && size.width < cell - 2) {
        Text(&image, count, cv::Point(box.x + (cell - size.width) / 2, box.y + (cell + size.height) / 2),
             scale, share > 0.5 ? cv::Scalar::all(255) : cv::Scalar::all(0));
      }
    }
    if (labelled) {
      const std::string name = NameOf(names, t);
      Text(&image, name, cv::Point(left - 8 - TextSize(name, scale).width, top + t * cell + cell / 2 + 4),
           scale, cv::Scalar::all(0));
      const std::string index = std::to_string(t);
      Text(&image, index,
           cv::Point(left + t * cell + (cell - TextSize(index, scale).width) / 2, top - 6), scale,
           cv::Scalar::all(0));
    }
  }
  std::ostringstream summary;
  summary << "top-1 " << Fixed(matrix.accuracy(), 4) << ", top-" << matrix.top_k() << " "
          << Fixed(matrix.top_k_accuracy(), 4) << ", " << matrix.total() << " samples";
  Text(&image, summary.str(), cv::Point(left, top + k * cell + 26), 0.45, cv::Scalar::all(0));
  std::vector<uchar> png;
  CREMA_REQUIRE(cv::imencode(".png", image, png), filename << ": OpenCV could not encode the PNG");
  WriteFileAtomically(filename, std::string(png.begin(), png.end()));
}
#else
void WriteConfusionPng(const ConfusionMatrix&, const std::vector<std::string>&,
                       const std::string& filename) {
  CREMA_FAIL(filename << ": writing the confusion matrix as PNG needs a build of Crema with "
                         "OpenCV");
}
#endif

template ScoredBlobs<float> FindScoredBlobs(const Net<float>&);
template ScoredBlobs<double> FindScoredBlobs(const Net<double>&);
template void ConfusionMatrix::Add(const ScoredBlobs<float>&);
template void ConfusionMatrix::Add(const ScoredBlobs<double>&);
template ConfusionMatrix EvaluateClassifier(Net<float>*, int, int);
template ConfusionMatrix EvaluateClassifier(Net<double>*, int, int);

}  // namespace crema
