// The metrics file of a training run: one JSON object per line (JSON Lines),
// appended as training goes, for scripts/plot_training_log.py and pandas
// (docs/training.md). A training line at each display:
//   {"kind": "train", "iter": 100, "time": <unix seconds>, "elapsed": <seconds
//    since this process began training>, "lr": 0.01, "loss": <smoothed>,
//    "images_per_s": 812.5, "outputs": {"loss": 0.42}}
// and a test line per test net at each test:
//   {"kind": "test", "iter": 1000, "time": ..., "elapsed": ..., "net": 0,
//    "outputs": {"accuracy": 0.91, "loss": 0.27}}
// A value that is not finite is written as null; an output of several
// values as a list.
//
// Each line goes out in one write() of the whole line, so a killed run
// leaves whole lines; a resumed run appends, first cutting a last line a
// full disk left without its newline. A fresh run replaces the file.
#ifndef CREMA_METRICS_FILE_HPP_
#define CREMA_METRICS_FILE_HPP_

#include <map>
#include <string>
#include <vector>

namespace crema {

class MetricsFile {
 public:
  // Output values by blob name, in the net's output order.
  using Outputs = std::vector<std::pair<std::string, std::vector<double>>>;

  // append: continue the file (a resumed run); else start it anew. A file
  // that cannot be opened is a user error naming it.
  MetricsFile(const std::string& path, bool append);
  ~MetricsFile();
  MetricsFile(const MetricsFile&) = delete;
  MetricsFile& operator=(const MetricsFile&) = delete;

  void Train(int iter, double lr, double loss, double images_per_second, const Outputs& outputs);
  void Test(int iter, int net, const Outputs& outputs);

  const std::string& path() const { return path_; }

 private:
  // The fields every line starts with: kind, iter, time, elapsed.
  std::string Head(const char* kind, int iter) const;
  void WriteLine(const std::string& json);

  std::string path_;
  int fd_ = -1;
  double start_;  // steady clock seconds when the file was opened
};

}  // namespace crema

#endif  // CREMA_METRICS_FILE_HPP_
