// What differs between CPU-only and CUDA builds: GPU error checks and kernel
// helpers in CUDA builds; in CPU-only builds (no CREMA_CUDA), bodies that fail loudly if GPU
// code is ever reached, so layers can declare GPU methods unconditionally.
#ifndef CREMA_UTIL_DEVICE_ALTERNATE_HPP_
#define CREMA_UTIL_DEVICE_ALTERNATE_HPP_

#ifndef CREMA_CUDA

#include <glog/logging.h>

#define NO_GPU LOG(FATAL) << "Cannot use GPU in a CPU-only build of Crema: rebuild with CREMA_CUDA=ON"

// Gives a layer GPU bodies that refuse to run in CPU-only builds.
#define STUB_GPU(classname)                                                          \
  template <typename Dtype>                                                          \
  void classname<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,        \
                                     const std::vector<Blob<Dtype>*>& top) {         \
    NO_GPU;                                                                          \
  }                                                                                  \
  template <typename Dtype>                                                          \
  void classname<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,          \
                                      const std::vector<bool>& propagate_down,       \
                                      const std::vector<Blob<Dtype>*>& bottom) {     \
    NO_GPU;                                                                          \
  }

#else  // CUDA build

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <driver_types.h>
#include <glog/logging.h>

#define CUDA_CHECK(condition)                                              \
  do {                                                                     \
    cudaError_t crema_cuda_error_ = (condition);                           \
    CHECK_EQ(crema_cuda_error_, cudaSuccess)                               \
        << #condition << ": " << cudaGetErrorString(crema_cuda_error_);    \
  } while (0)

#define CUBLAS_CHECK(condition)                                                   \
  do {                                                                            \
    cublasStatus_t crema_cublas_status_ = (condition);                            \
    CHECK_EQ(crema_cublas_status_, CUBLAS_STATUS_SUCCESS)                         \
        << #condition << ": " << ::crema::cublasGetErrorString(crema_cublas_status_); \
  } while (0)

#define CURAND_CHECK(condition)                                                   \
  do {                                                                            \
    curandStatus_t crema_curand_status_ = (condition);                            \
    CHECK_EQ(crema_curand_status_, CURAND_STATUS_SUCCESS)                         \
        << #condition << ": " << ::crema::curandGetErrorString(crema_curand_status_); \
  } while (0)

// A grid-stride loop over n elements.
#define CUDA_KERNEL_LOOP(i, n)                                        \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; \
       i < (n); i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// Kernel launches are checked right after, so a bad launch names its place.
#define CUDA_POST_KERNEL_CHECK CUDA_CHECK(cudaPeekAtLastError())

namespace crema {

const char* cublasGetErrorString(cublasStatus_t status);
const char* curandGetErrorString(curandStatus_t status);

constexpr int CREMA_CUDA_NUM_THREADS = 512;
// Enough blocks to cover n elements, capped: the kernels loop over the rest.
inline int CREMA_GET_BLOCKS(const int64_t n) {
  const int64_t blocks = (n + CREMA_CUDA_NUM_THREADS - 1) / CREMA_CUDA_NUM_THREADS;
  return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

}  // namespace crema

#endif  // !CREMA_CUDA

#endif  // CREMA_UTIL_DEVICE_ALTERNATE_HPP_
