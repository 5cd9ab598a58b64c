// A stopwatch for timing layers and iterations: wall time in CPU mode, CUDA
// events in GPU mode (so asynchronous kernels are timed, not their launch).
#ifndef CREMA_UTIL_BENCHMARK_HPP_
#define CREMA_UTIL_BENCHMARK_HPP_

#include <chrono>

#include "crema/common.hpp"

namespace crema {

class Timer {
 public:
  Timer();
  ~Timer();
  void Start();
  void Stop();
  // Time between the last Start and Stop (Stops a running timer; 0 before
  // the first Start).
  double MilliSeconds();
  double Seconds() { return MilliSeconds() / 1000.0; }

 private:
  bool gpu_ = false;
  bool running_ = false;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_cpu_, stop_cpu_;
#ifdef CREMA_CUDA
  cudaEvent_t start_gpu_ = nullptr, stop_gpu_ = nullptr;
#endif
  DISABLE_COPY_AND_ASSIGN(Timer);
};

}  // namespace crema

#endif  // CREMA_UTIL_BENCHMARK_HPP_
