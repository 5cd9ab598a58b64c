// What the cuDNN layers share: the status check, the calling thread's cuDNN
// handle and workspace, element types and scaling constants, and owners of
// cuDNN's descriptors. This folder is compiled only in builds with cuDNN 9.
//
// Rules every cuDNN layer keeps:
// - It is a twin of a reference layer (it derives from it): same blobs, same
//   set-up, same CPU body; only its GPU body differs, and wherever cuDNN does
//   not compute what Caffe's formula says (a setting, a shape), that body is
//   the reference CUDA body.
// - It runs on the default stream, as the CUDA bodies and cuBLAS do, so the
//   net's layers run in order without further synchronisation.
// - Descriptors are set in Reshape (host-only calls); anything that needs
//   the device (a handle, an algorithm query) waits for the first GPU pass.
#ifndef CREMA_CUDNN_CUDNN_HPP_
#define CREMA_CUDNN_CUDNN_HPP_

#include <cudnn.h>

#include <cstddef>
#include <string>
#include <vector>

#include "crema/common.hpp"

#define CUDNN_CHECK(condition)                                             \
  do {                                                                     \
    cudnnStatus_t crema_cudnn_status_ = (condition);                       \
    CHECK_EQ(crema_cudnn_status_, CUDNN_STATUS_SUCCESS)                    \
        << #condition << ": " << cudnnGetErrorString(crema_cudnn_status_); \
  } while (0)

namespace crema {

// The calling thread's cuDNN handle on its device (Context::device()), made
// on first use and remade when the thread changes device.
cudnnHandle_t CudnnHandle();

// The calling thread's cuDNN workspace on its device: at least `bytes` of
// device memory, shared by every cuDNN layer the thread runs (they run one at
// a time). It grows to the largest size asked for and never shrinks; a size
// the device cannot hold is a MemoryError.
void* CudnnWorkspace(size_t bytes);

// The most workspace one convolution algorithm may take: an algorithm that
// needs more is passed over for the next one cuDNN ranks. Half of the
// device's free memory (with the workspace already held counted as free), at
// most kCudnnWorkspaceCap and the thread's allocation limit.
constexpr size_t kCudnnWorkspaceCap = size_t(1) << 30;
size_t CudnnWorkspaceLimit();

// cuDNN's element type, and its scaling factors (alpha, beta), which are
// float for float data and double for double data.
template <typename Dtype>
struct CudnnType;
template <>
struct CudnnType<float> {
  static constexpr cudnnDataType_t type = CUDNN_DATA_FLOAT;
  static const void* one() { return &kOne; }
  static const void* zero() { return &kZero; }
  static constexpr float kOne = 1, kZero = 0;
};
template <>
struct CudnnType<double> {
  static constexpr cudnnDataType_t type = CUDNN_DATA_DOUBLE;
  static const void* one() { return &kOne; }
  static const void* zero() { return &kZero; }
  static constexpr double kOne = 1, kZero = 0;
};

// Whether a blob of `count` values fits cuDNN's descriptors (int sizes).
inline bool FitsCudnn(size_t count) { return count > 0 && count <= (size_t(1) << 31) - 1; }

// A packed NCHW tensor descriptor.
class CudnnTensor {
 public:
  CudnnTensor();
  ~CudnnTensor();
  template <typename Dtype>
  void Set(int n, int c, int h, int w) {
    Set(CudnnType<Dtype>::type, n, c, h, w);
  }
  void Set(cudnnDataType_t type, int n, int c, int h, int w);
  cudnnTensorDescriptor_t get() const { return descriptor_; }

 private:
  cudnnTensorDescriptor_t descriptor_ = nullptr;
  DISABLE_COPY_AND_ASSIGN(CudnnTensor);
};

// Owns one cuDNN descriptor of the kind that Create and Destroy make.
template <typename Descriptor, cudnnStatus_t (*Create)(Descriptor*),
          cudnnStatus_t (*Destroy)(Descriptor)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() { CUDNN_CHECK(Create(&descriptor_)); }
  ~CudnnDescriptor() { Destroy(descriptor_); }
  Descriptor get() const { return descriptor_; }

 private:
  Descriptor descriptor_ = nullptr;
  DISABLE_COPY_AND_ASSIGN(CudnnDescriptor);
};

using CudnnFilter = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                    cudnnDestroyFilterDescriptor>;
using CudnnConvolution =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                    cudnnDestroyConvolutionDescriptor>;
using CudnnPooling = CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                                     cudnnDestroyPoolingDescriptor>;
using CudnnActivation =
    CudnnDescriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor,
                    cudnnDestroyActivationDescriptor>;
using CudnnLRN =
    CudnnDescriptor<cudnnLRNDescriptor_t, cudnnCreateLRNDescriptor, cudnnDestroyLRNDescriptor>;

// cuDNN's version at run time and at build time ("9.19.0"), for the log.
std::string CudnnVersions();

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_HPP_
