#include "crema/util/benchmark.hpp"

namespace crema {

Timer::Timer() {
  gpu_ = Context::mode() == Context::GPU;
#ifdef CREMA_CUDA
  if (gpu_) {
    CUDA_CHECK(cudaEventCreate(&start_gpu_));
    CUDA_CHECK(cudaEventCreate(&stop_gpu_));
  }
#endif
}

Timer::~Timer() {
#ifdef CREMA_CUDA
  if (start_gpu_) cudaEventDestroy(start_gpu_);
  if (stop_gpu_) cudaEventDestroy(stop_gpu_);
#endif
}

void Timer::Start() {
  running_ = true;
  started_ = true;
#ifdef CREMA_CUDA
  if (gpu_) {
    CUDA_CHECK(cudaEventRecord(start_gpu_, 0));
    return;
  }
#endif
  start_cpu_ = std::chrono::steady_clock::now();
}

void Timer::Stop() {
  running_ = false;
#ifdef CREMA_CUDA
  if (gpu_) {
    CUDA_CHECK(cudaEventRecord(stop_gpu_, 0));
    CUDA_CHECK(cudaEventSynchronize(stop_gpu_));
    return;
  }
#endif
  stop_cpu_ = std::chrono::steady_clock::now();
}

double Timer::MilliSeconds() {
  if (!started_) return 0;  // (a device's elapsed time between unrecorded events is an error)
  if (running_) Stop();
#ifdef CREMA_CUDA
  if (gpu_) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_gpu_, stop_gpu_));
    return ms;
  }
#endif
  return std::chrono::duration<double, std::milli>(stop_cpu_ - start_cpu_).count();
}

}  // namespace crema
