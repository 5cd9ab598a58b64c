#include "crema/metrics_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>

#include "crema/common.hpp"

namespace crema {

namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Number(std::ostringstream* os, double value) {
  if (!std::isfinite(value)) {
    *os << "null";
    return;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  *os << text;
}

// A JSON string: quotes, backslashes and control characters escaped.
void String(std::ostringstream* os, const std::string& text) {
  *os << '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      *os << '\\' << c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      *os << escaped;
    } else {
      *os << c;
    }
  }
  *os << '"';
}

void WriteOutputs(std::ostringstream* os, const MetricsFile::Outputs& outputs) {
  *os << "\"outputs\": {";
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i) *os << ", ";
    String(os, outputs[i].first);
    *os << ": ";
    const std::vector<double>& values = outputs[i].second;
    if (values.size() == 1) {
      Number(os, values[0]);
      continue;
    }
    *os << '[';
    for (size_t j = 0; j < values.size(); ++j) {
      if (j) *os << ", ";
      Number(os, values[j]);
    }
    *os << ']';
  }
  *os << '}';
}

// Cuts what follows the file's last newline (a line a full disk cut short).
void CutPartialLine(int fd, const std::string& path) {
  struct stat status;
  CREMA_REQUIRE(fstat(fd, &status) == 0, path << ": " << std::strerror(errno));
  off_t end = status.st_size;
  char c = '\n';
  while (end > 0 && pread(fd, &c, 1, end - 1) == 1 && c != '\n') --end;
  if (end != status.st_size) {
    CREMA_REQUIRE(ftruncate(fd, end) == 0, path << ": " << std::strerror(errno));
  }
}

}  // namespace

MetricsFile::MetricsFile(const std::string& path, bool append)
    : path_(path), start_(SteadySeconds()) {
  // Read too when appending: CutPartialLine looks for the last newline.
  const int flags = (append ? O_RDWR | O_APPEND : O_WRONLY | O_TRUNC) | O_CREAT | O_CLOEXEC;
  fd_ = open(path.c_str(), flags, 0644);
  CREMA_REQUIRE(fd_ >= 0, "the metrics file " << path << " cannot be opened: "
                                              << std::strerror(errno));
  if (append) CutPartialLine(fd_, path);
}

MetricsFile::~MetricsFile() {
  if (fd_ >= 0) close(fd_);
}

std::string MetricsFile::Head(const char* kind, int iter) const {
  std::ostringstream os;
  os << "{\"kind\": \"" << kind << "\", \"iter\": " << iter << ", \"time\": ";
  char time[32];
  std::snprintf(time, sizeof(time), "%.3f", UnixSeconds());
  os << time << ", \"elapsed\": ";
  Number(&os, SteadySeconds() - start_);
  return os.str();
}

void MetricsFile::Train(int iter, double lr, double loss, double images_per_second,
                        const Outputs& outputs) {
  std::ostringstream os;
  os << Head("train", iter) << ", \"lr\": ";
  Number(&os, lr);
  os << ", \"loss\": ";
  Number(&os, loss);
  os << ", \"images_per_s\": ";
  Number(&os, images_per_second);
  os << ", ";
  WriteOutputs(&os, outputs);
  os << "}\n";
  WriteLine(os.str());
}

void MetricsFile::Test(int iter, int net, const Outputs& outputs) {
  std::ostringstream os;
  os << Head("test", iter) << ", \"net\": " << net << ", ";
  WriteOutputs(&os, outputs);
  os << "}\n";
  WriteLine(os.str());
}

void MetricsFile::WriteLine(const std::string& json) {
  // One write: O_APPEND puts the whole line at the end at once. A short
  // write (a full disk) is cut off again, so the file holds whole lines;
  // training goes on without that line.
  const off_t before = lseek(fd_, 0, SEEK_END);
  const ssize_t written = write(fd_, json.data(), json.size());
  if (written == static_cast<ssize_t>(json.size())) return;
  const std::string why = written < 0 ? std::strerror(errno) : "a short write";
  if (written > 0 && before >= 0 && ftruncate(fd_, before) != 0) {
    LOG(WARNING) << "the metrics file " << path_ << ": cutting a partial line failed: "
                 << std::strerror(errno);
  }
  LOG(WARNING) << "the metrics file " << path_ << ": a line was not written ("
               << why << "); training goes on";
}

}  // namespace crema
