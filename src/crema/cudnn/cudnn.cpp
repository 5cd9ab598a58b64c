#include "crema/cudnn/cudnn.hpp"

#include <algorithm>
#include <boost/thread/tss.hpp>
#include <mutex>
#include <sstream>

#include "crema/syncedmem.hpp"

namespace crema {

namespace {

// One thread's cuDNN state on one device. Released when the thread ends or
// changes device; failures while releasing are ignored (at process exit the
// CUDA runtime may already be gone).
struct CudnnThreadState {
  int device = -1;
  cudnnHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;

  ~CudnnThreadState() { Release(); }
  void Release() {
    if (workspace) cudaFree(workspace);
    if (handle) cudnnDestroy(handle);
    workspace = nullptr;
    workspace_bytes = 0;
    handle = nullptr;
    device = -1;
  }
};

// The calling thread's state, on its current device.
CudnnThreadState& ThreadState() {
  static boost::thread_specific_ptr<CudnnThreadState> states;
  if (!states.get()) states.reset(new CudnnThreadState());
  CudnnThreadState& state = *states;
  if (state.device != Context::device()) state.Release();
  return state;
}

std::string VersionText(size_t version) {
  // cuDNN 9 numbers versions major * 10000 + minor * 100 + patch.
  std::ostringstream os;
  os << version / 10000 << '.' << version / 100 % 100 << '.' << version % 100;
  return os.str();
}

}  // namespace

cudnnHandle_t CudnnHandle() {
  CudnnThreadState& state = ThreadState();
  if (!state.handle) {
    CUDA_CHECK(cudaSetDevice(Context::device()));
    CUDNN_CHECK(cudnnCreate(&state.handle));
    state.device = Context::device();
    static std::once_flag logged;
    std::call_once(logged, [] { LOG(INFO) << "cuDNN engine: " << CudnnVersions(); });
  }
  return state.handle;
}

void* CudnnWorkspace(size_t bytes) {
  CudnnThreadState& state = ThreadState();
  if (bytes <= state.workspace_bytes) return state.workspace;
  if (state.workspace) CUDA_CHECK(cudaFree(state.workspace));  // waits for the work using it
  state.workspace = nullptr;
  state.workspace_bytes = 0;
  CUDA_CHECK(cudaSetDevice(Context::device()));
  DeviceMalloc(&state.workspace, bytes);
  state.workspace_bytes = bytes;
  state.device = Context::device();
  return state.workspace;
}

size_t CudnnWorkspaceLimit() {
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return std::min(
      {kCudnnWorkspaceCap, (free + ThreadState().workspace_bytes) / 2, Context::max_allocation()});
}

CudnnTensor::CudnnTensor() { CUDNN_CHECK(cudnnCreateTensorDescriptor(&descriptor_)); }

CudnnTensor::~CudnnTensor() { cudnnDestroyTensorDescriptor(descriptor_); }

void CudnnTensor::Set(cudnnDataType_t type, int n, int c, int h, int w) {
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(descriptor_, CUDNN_TENSOR_NCHW, type, n, c, h, w));
}

std::string CudnnVersions() {
  return "cuDNN " + VersionText(cudnnGetVersion()) + " (built with " + VersionText(CUDNN_VERSION) +
         ")";
}

}  // namespace crema
