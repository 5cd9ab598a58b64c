// A classifier's scores over a test set, for `crema test --labels` and
// Python's crema.evaluate_classifier: the confusion matrix (a row per true
// class, a column per top-1 prediction), each class's accuracy (the share
// of its samples predicted right), and the top-1 and top-k accuracy.
//
// The scores and labels are the bottoms of the net's first Accuracy layer,
// read with its axis and ignore_label: scores outer x classes x inner,
// labels outer x inner. A label is right within the top k when fewer than k
// classes score strictly higher than it (Accuracy's rule, so the top-1 here
// equals that layer's output).
#ifndef CREMA_EVALUATION_HPP_
#define CREMA_EVALUATION_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "crema/net.hpp"

namespace crema {

// The blobs a classifier is scored on, found in a net.
template <typename Dtype>
struct ScoredBlobs {
  std::string layer;  // the Accuracy layer
  const Blob<Dtype>* scores = nullptr;
  const Blob<Dtype>* labels = nullptr;
  int axis = 1;
  bool has_ignore_label = false;
  int ignore_label = 0;
};

// The first Accuracy layer's bottoms; a net without one is a user error.
template <typename Dtype>
ScoredBlobs<Dtype> FindScoredBlobs(const Net<Dtype>& net);

class ConfusionMatrix {
 public:
  // classes >= 1; top_k >= 1 (more than the classes counts as all of them).
  ConfusionMatrix(int classes, int top_k);

  // One batch: a label outside [0, classes) other than the ignored one is a
  // user error naming the layer and the label; the shapes must agree.
  template <typename Dtype>
  void Add(const ScoredBlobs<Dtype>& blobs);

  int classes() const { return classes_; }
  int top_k() const { return top_k_; }
  int64_t count(int truth, int predicted) const { return counts_[truth * classes_ + predicted]; }
  int64_t class_total(int truth) const;
  int64_t total() const { return total_; }
  int64_t right() const;  // the diagonal: predicted as labelled
  // Shares in [0, 1]; NaN with no samples (of that class).
  double accuracy() const;
  double top_k_accuracy() const;
  double class_accuracy(int truth) const;

  // The report `crema test` prints: per-class accuracy, top-1 and top-k, and
  // the matrix, rows labelled by names (one per class; empty: indices).
  std::vector<std::string> ReportLines(const std::vector<std::string>& names) const;

 private:
  int classes_;
  int top_k_;
  std::vector<int64_t> counts_;  // classes x classes, row = truth
  int64_t total_ = 0;
  int64_t top_k_right_ = 0;
};

// Runs `iterations` forward passes of `net` and scores its first Accuracy
// layer's bottoms.
template <typename Dtype>
ConfusionMatrix EvaluateClassifier(Net<Dtype>* net, int iterations, int top_k);

// The matrix as a PNG: a cell per (true, predicted) pair shaded by the
// share of the true class's samples, with its count where the cells are
// large enough, names on the axes. Written atomically; needs OpenCV.
void WriteConfusionPng(const ConfusionMatrix& matrix, const std::vector<std::string>& names,
                       const std::string& filename);

}  // namespace crema

#endif  // CREMA_EVALUATION_HPP_
