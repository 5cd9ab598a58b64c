#include "crema/reporter.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "crema/detection/average_precision.hpp"

namespace crema {

Clock SteadyClock() {
  return [] {
    const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration<double>(since_epoch).count();
  };
}

LineSink LogInfoSink() {
  return [](const std::string& line) { LOG(INFO) << line; };
}

// Rows whose number varies with the batch, summed and scored, never averaged.
template <typename Dtype>
bool IsDetectionEvaluation(const Net<Dtype>& net, int blob_id) {
  for (size_t i = 0; i < net.layers().size(); ++i) {
    if (std::string(net.layers()[i]->type()) != "DetectionEvaluate") continue;
    const std::vector<int>& tops = net.top_id_vecs()[i];
    if (std::find(tops.begin(), tops.end(), blob_id) != tops.end()) return true;
  }
  return false;
}

template <typename Dtype>
void ReportOutputs(const Net<Dtype>& net, const std::vector<Dtype>& values,
                   const std::string& label, const LineSink& sink) {
  size_t index = 0;
  for (size_t j = 0; j < net.output_blobs().size(); ++j) {
    const int blob_id = net.output_blob_indices()[j];
    if (IsDetectionEvaluation(net, blob_id)) continue;
    const std::string& name = net.blob_names()[blob_id];
    const Dtype weight = net.blob_loss_weights()[blob_id];
    for (int k = 0; k < net.output_blobs()[j]->count() && index < values.size(); ++k, ++index) {
      std::ostringstream line;
      if (!label.empty()) line << "    " << label << " #" << index << ": ";
      line << name << " = " << values[index];
      if (weight) line << " (* " << weight << " = " << weight * values[index] << " loss)";
      sink(line.str());
    }
  }
}

template <typename Dtype>
std::vector<Dtype> OutputValues(const Net<Dtype>& net) {
  std::vector<Dtype> values;
  for (size_t j = 0; j < net.output_blobs().size(); ++j) {
    if (IsDetectionEvaluation(net, net.output_blob_indices()[j])) continue;
    const Blob<Dtype>* blob = net.output_blobs()[j];
    const Dtype* data = blob->cpu_data();
    values.insert(values.end(), data, data + blob->count());
  }
  return values;
}

template <typename Dtype>
TrainingReporter<Dtype>::TrainingReporter(const SolverParameter& param, int solver_count,
                                          bool print, Clock clock, LineSink sink)
    : display_(param.display()),
      average_loss_(param.average_loss()),
      max_iter_(param.max_iter()),
      iter_size_(param.iter_size()),
      solver_count_(solver_count),
      print_(print),
      clock_(std::move(clock)),
      sink_(std::move(sink)) {}

template <typename Dtype>
void TrainingReporter<Dtype>::Start(int iter) {
  start_iter_ = iter;
  losses_.clear();
  smoothed_loss_ = 0;
  last_display_time_ = clock_();
  last_display_iter_ = iter;
  images_ = 0;
}

// Until average_loss losses are in, the mean of those seen; then a sliding
// window, each new loss replacing the one average_loss iterations older.
template <typename Dtype>
void TrainingReporter<Dtype>::Smooth(Dtype loss, int slot) {
  if (static_cast<int>(losses_.size()) < average_loss_) {
    losses_.push_back(loss);
    const int size = static_cast<int>(losses_.size());
    smoothed_loss_ = (smoothed_loss_ * (size - 1) + loss) / size;
  } else {
    smoothed_loss_ += (loss - losses_[slot]) / average_loss_;
    losses_[slot] = loss;
  }
}

template <typename Dtype>
void TrainingReporter<Dtype>::Iterated(int iter, Dtype loss, const Net<Dtype>& net) {
  Smooth(loss, (iter - start_iter_) % average_loss_);
  // Counted every iteration, so a net whose caller reshapes its input
  // between iterations is counted as it ran.
  images_ += static_cast<double>(net.batch_size()) * iter_size_ * solver_count_;
  if (print_ && display_ && iter % display_ == 0) Print(iter, net);
}

template <typename Dtype>
void TrainingReporter<Dtype>::Print(int iter, const Net<Dtype>& net) {
  const double now = clock_();
  const double seconds = now - last_display_time_;
  const int done = iter - last_display_iter_;
  const double per_second = done > 0 && seconds > 0 ? done / seconds : 0;
  std::ostringstream head;
  head << "Iteration " << iter << " (" << per_second << " iter/s, " << seconds << "s/" << display_
       << " iters), loss = " << smoothed_loss_;
  sink_(head.str());
  ReportOutputs(net, OutputValues(net), "Train net output", sink_);
  if (on_display_) on_display_(iter, smoothed_loss_, seconds > 0 ? images_ / seconds : 0);
  if (per_second > 0 && max_iter_ > iter) {
    const int eta = static_cast<int>((max_iter_ - iter) / per_second);
    char eta_text[32];
    std::snprintf(eta_text, sizeof(eta_text), "%d:%02d:%02d", eta / 3600, eta / 60 % 60, eta % 60);
    // The images of the iterations since the last display, this one's
    // included: the same iterations `done` counts.
    std::ostringstream rate;
    rate << "    " << images_ / seconds << " images/s, ETA " << eta_text;
    sink_(rate.str());
  }
  last_display_time_ = now;
  last_display_iter_ = iter;
  images_ = 0;
}

template <typename Dtype>
void TrainingReporter<Dtype>::Finished(int iter, Dtype loss) {
  // As Caffe does: the slot counts from iteration 0, not from the run's start.
  Smooth(loss, iter % average_loss_);
  if (!print_) return;
  std::ostringstream line;
  line << "Iteration " << iter << ", loss = " << smoothed_loss_;
  sink_(line.str());
}

template <typename Dtype>
void OutputMeans<Dtype>::Add(const Net<Dtype>& net) {
  const std::vector<Dtype> values = OutputValues(net);
  if (sums_.size() < values.size()) sums_.resize(values.size(), Dtype(0));
  for (size_t i = 0; i < values.size(); ++i) sums_[i] += values[i];
  for (size_t j = 0; j < net.output_blobs().size(); ++j) {
    const int blob_id = net.output_blob_indices()[j];
    if (!IsDetectionEvaluation(net, blob_id)) continue;
    const Blob<Dtype>& rows = *net.output_blobs()[j];
    std::vector<float>& kept = detection_rows_[blob_id];
    kept.insert(kept.end(), rows.cpu_data(), rows.cpu_data() + rows.count());
  }
  ++batches_;
}

template <typename Dtype>
std::vector<Dtype> OutputMeans<Dtype>::Means() const {
  std::vector<Dtype> means(sums_);
  for (Dtype& mean : means) mean /= std::max(1, batches_);
  return means;
}

template <typename Dtype>
std::map<std::string, double> OutputMeans<Dtype>::NamedMeans(const Net<Dtype>& net) const {
  const std::vector<Dtype> means = Means();
  std::map<std::string, double> named;
  size_t index = 0;
  for (size_t j = 0; j < net.output_blobs().size(); ++j) {
    const int blob_id = net.output_blob_indices()[j];
    if (IsDetectionEvaluation(net, blob_id)) continue;
    const int count = net.output_blobs()[j]->count();
    if (count == 1 && index < means.size()) named[net.blob_names()[blob_id]] = means[index];
    index += count;
  }
  for (const auto& [blob_id, rows] : detection_rows_) {
    std::map<int, ssd::ClassTally> tallies;
    ssd::AddEvaluationRows(rows.data(), static_cast<int>(rows.size() / 5), &tallies);
    std::map<int, double> per_class;
    named[net.blob_names()[blob_id]] =
        ssd::MeanAveragePrecision(tallies, ap_versions_.front(), &per_class);
  }
  return named;
}

template <typename Dtype>
void OutputMeans<Dtype>::Report(const Net<Dtype>& net, const std::string& label,
                                const LineSink& sink) const {
  const std::vector<Dtype> means = Means();
  ReportOutputs(net, means, label, sink);
  // Numbered after the averaged values, as the SSD fork numbers its mAP
  // ("#0" in a test net whose one output is DetectionEvaluate's).
  size_t index = means.size();
  for (const auto& [blob_id, rows] : detection_rows_) {
    std::map<int, ssd::ClassTally> tallies;
    ssd::AddEvaluationRows(rows.data(), static_cast<int>(rows.size() / 5), &tallies);
    const std::string& name = net.blob_names()[blob_id];
    for (const std::string& version : ap_versions_) {
      std::map<int, double> per_class;
      const double map = ssd::MeanAveragePrecision(tallies, version, &per_class);
      std::ostringstream line;
      if (!label.empty()) line << "    " << label << " #" << index << ": ";
      line << name << " = " << map << " (mAP, " << version << ")";
      sink(line.str());
      for (const auto& [class_label, ap] : per_class) {
        if (!per_class_) break;
        std::ostringstream class_line;
        class_line << "        class " << class_label << ": AP " << ap << " (" << version << ")";
        sink(class_line.str());
      }
    }
    ++index;
  }
}

#define INSTANTIATE_REPORTER(Dtype)                                                          \
  template void ReportOutputs<Dtype>(const Net<Dtype>&, const std::vector<Dtype>&,           \
                                     const std::string&, const LineSink&);                   \
  template std::vector<Dtype> OutputValues<Dtype>(const Net<Dtype>&);                        \
  template bool IsDetectionEvaluation<Dtype>(const Net<Dtype>&, int);                        \
  template class TrainingReporter<Dtype>;                                                    \
  template class OutputMeans<Dtype>
INSTANTIATE_REPORTER(float);
INSTANTIATE_REPORTER(double);

}  // namespace crema
