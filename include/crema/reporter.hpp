// What training and testing print, in one place. TrainingReporter smooths
// the training loss and, every `display` iterations, prints the iteration,
// its rate (iterations and images per second), the time left and the
// training net's outputs. OutputMeans sums a net's outputs over test batches
// and prints their means. Both print an output the same way:
//   "    <label> #k: <blob> = <value> (* <loss weight> = <weighted> loss)".
// The clock and the line sink are explicit, so that a test drives the time
// and reads the lines.
#ifndef CREMA_REPORTER_HPP_
#define CREMA_REPORTER_HPP_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "crema/net.hpp"

namespace crema {

// Seconds since a fixed point; only differences are used.
using Clock = std::function<double()>;
// The monotonic wall clock.
Clock SteadyClock();
// Receives each printed line.
using LineSink = std::function<void(const std::string&)>;
// Writes each line to the INFO log.
LineSink LogInfoSink();

// Prints one line per output value of `net`: values holds them in output
// order (as OutputValues gives them). An empty label prints
// "<blob> = <value>..." without the "<label> #k:" prefix (crema test's
// summary, as in Caffe).
template <typename Dtype>
void ReportOutputs(const Net<Dtype>& net, const std::vector<Dtype>& values,
                   const std::string& label, const LineSink& sink);

// Every value of the net's outputs, in output order.
template <typename Dtype>
std::vector<Dtype> OutputValues(const Net<Dtype>& net);

template <typename Dtype>
class TrainingReporter {
 public:
  // solver_count: every solver trains on its own batch, so the images per
  // iteration are the net's batch x iter_size x solver_count. print: false
  // for all solvers but rank 0 (they still smooth their loss).
  TrainingReporter(const SolverParameter& param, int solver_count, bool print,
                   Clock clock = SteadyClock(), LineSink sink = LogInfoSink());

  // A run of iterations starts at `iter`: the smoothing and the rate restart.
  void Start(int iter);
  // Iteration `iter` has run its forward and backward passes with this mean
  // loss; at a display iteration, prints.
  void Iterated(int iter, Dtype loss, const Net<Dtype>& net);
  // After the last iteration: a forward pass's loss, printed as
  // "Iteration <iter>, loss = <smoothed>".
  void Finished(int iter, Dtype loss);

  Dtype smoothed_loss() const { return smoothed_loss_; }

  // Called at each display after the lines are printed, with the iteration,
  // the smoothed loss and the images per second since the last display.
  using DisplayListener = std::function<void(int, Dtype, double)>;
  void set_display_listener(DisplayListener listener) { on_display_ = std::move(listener); }

 private:
  // Averages the last average_loss losses; slot is where this one goes.
  void Smooth(Dtype loss, int slot);
  void Print(int iter, const Net<Dtype>& net);

  // From the solver's parameters: how often to print, over how many
  // iterations the loss is averaged, where training ends (for the time
  // left), the batches each iteration accumulates.
  const int display_;
  const int average_loss_;
  const int max_iter_;
  const int iter_size_;
  const int solver_count_;
  const bool print_;
  const Clock clock_;
  const LineSink sink_;
  int start_iter_ = 0;
  std::vector<Dtype> losses_;
  Dtype smoothed_loss_ = 0;
  // Since the last display: when it was, its iteration, the images trained.
  double last_display_time_ = 0;
  int last_display_iter_ = 0;
  double images_ = 0;
  DisplayListener on_display_;
};

// Whether blob blob_id of net is a DetectionEvaluate layer's top (judged
// detections, reported as mAP rather than averaged).
template <typename Dtype>
bool IsDetectionEvaluation(const Net<Dtype>& net, int blob_id);

// Sums a net's outputs over batches; prints their means.
template <typename Dtype>
// A DetectionEvaluate output (rows of judged detections, as many as the
// batch gave) is not averaged: its rows are summed into per-class tallies
// and reported as mean average precision, under each of `ap_versions`
// (11point, MaxIntegral, Integral), with each class's AP when per_class.
class OutputMeans {
 public:
  explicit OutputMeans(std::vector<std::string> ap_versions = {"Integral"},
                       bool per_class = false)
      : ap_versions_(std::move(ap_versions)), per_class_(per_class) {}
  void Add(const Net<Dtype>& net);
  int batches() const { return batches_; }
  std::vector<Dtype> Means() const;
  // By output name: the mean of each single-value output, and each
  // DetectionEvaluate output's mAP under the first ap_version.
  std::map<std::string, double> NamedMeans(const Net<Dtype>& net) const;
  void Report(const Net<Dtype>& net, const std::string& label, const LineSink& sink) const;

 private:
  std::vector<Dtype> sums_;
  int batches_ = 0;
  const std::vector<std::string> ap_versions_;
  const bool per_class_;
  // By output blob id: every DetectionEvaluate row seen (5 values each).
  std::map<int, std::vector<float>> detection_rows_;
};

}  // namespace crema

#endif  // CREMA_REPORTER_HPP_
