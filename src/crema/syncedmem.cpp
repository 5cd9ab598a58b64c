#include "crema/syncedmem.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

namespace crema {

namespace {
std::atomic<uint64_t> g_allocations{0};
// Stamps come from one counter, so no two states of any memories share one.
std::atomic<uint64_t> g_stamps{0};
uint64_t NewStamp() { return ++g_stamps; }
}  // namespace

uint64_t SyncedMemory::allocations() { return g_allocations.load(); }

namespace {
// "1.5 GiB (1610612736 bytes)": readable, and exact for whoever compares.
std::string Bytes(size_t bytes) {
  std::ostringstream os;
  const double gib = static_cast<double>(bytes) / (1u << 30);
  const double mib = static_cast<double>(bytes) / (1u << 20);
  os.precision(3);
  if (gib >= 1) {
    os << gib << " GiB (" << bytes << " bytes)";
  } else if (mib >= 1) {
    os << mib << " MiB (" << bytes << " bytes)";
  } else {
    os << bytes << " bytes";
  }
  return os.str();
}

// An allocation above the thread's limit fails before it is tried: a shape
// from a prototxt must not exhaust the machine.
void RequireWithinLimit(size_t size, const char* memory) {
  if (size <= Context::max_allocation()) return;
  throw MemoryError("cannot allocate " + Bytes(size) + " of " + memory +
                    " memory: above this thread's allocation limit of " +
                    Bytes(Context::max_allocation()));
}

}  // namespace

#ifdef CREMA_CUDA
// cudaMalloc failing for lack of memory is the user's to fix (a smaller
// batch); other CUDA failures stay programming or driver errors.
void DeviceMalloc(void** ptr, size_t size) {
  RequireWithinLimit(size, "GPU");
  const cudaError_t status = cudaMalloc(ptr, size);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // Clears the error so later calls are not blamed.
    int device = -1;
    size_t free = 0, total = 0;
    cudaGetDevice(&device);
    cudaMemGetInfo(&free, &total);
    throw MemoryError("GPU " + std::to_string(device) + " is out of memory: cannot allocate " +
                      Bytes(size) + " (" + Bytes(free) + " free of " + Bytes(total) + ")");
  }
  CUDA_CHECK(status);
}
#endif

void MallocHost(void** ptr, size_t size, bool* use_cuda) {
  RequireWithinLimit(size, "host");
  ++g_allocations;
#ifdef CREMA_CUDA
  if (Context::mode() == Context::GPU) {
    const cudaError_t status = cudaMallocHost(ptr, size);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw MemoryError("cannot allocate " + Bytes(size) + " of pinned host memory");
    }
    CUDA_CHECK(status);
    *use_cuda = true;
    return;
  }
#endif
  // 64-byte alignment suits every vector unit the kernels may use; sizes
  // near SIZE_MAX would wrap when rounded up.
  *ptr = size > SIZE_MAX - 128
             ? nullptr
             : std::aligned_alloc(64, ((size + 63) / 64) * 64 + (size == 0 ? 64 : 0));
  *use_cuda = false;
  if (!*ptr) throw MemoryError("host memory is exhausted: cannot allocate " + Bytes(size));
}

void FreeHost(void* ptr, bool use_cuda) {
#ifdef CREMA_CUDA
  if (use_cuda) {
    CUDA_CHECK(cudaFreeHost(ptr));
    return;
  }
#else
  (void)use_cuda;
#endif
  std::free(ptr);
}

SyncedMemory::SyncedMemory() : stamp_(NewStamp()) {
#ifdef CREMA_CUDA
  if (Context::DeviceCount() > 0) CUDA_CHECK(cudaGetDevice(&device_));
#endif
}

SyncedMemory::SyncedMemory(size_t size) : SyncedMemory() { size_ = size; }

SyncedMemory::~SyncedMemory() {
  CheckDevice();
  if (cpu_ptr_ && own_cpu_data_) FreeHost(cpu_ptr_, cpu_malloc_use_cuda_);
#ifdef CREMA_CUDA
  if (gpu_ptr_ && own_gpu_data_) CUDA_CHECK(cudaFree(gpu_ptr_));
#endif
}

// Device memory must be used on the device it was allocated on.
void SyncedMemory::CheckDevice() {
#if defined(CREMA_CUDA) && !defined(NDEBUG)
  if (gpu_ptr_) {
    int device;
    cudaGetDevice(&device);
    CHECK_EQ(device, device_) << "SyncedMemory used on a device it was not allocated on";
  }
#endif
}

void SyncedMemory::to_cpu() {
  CheckDevice();
  WriteDeferred();
  switch (head_) {
    case UNINITIALIZED:
      MallocHost(&cpu_ptr_, size_, &cpu_malloc_use_cuda_);
      std::memset(cpu_ptr_, 0, size_);
      head_ = HEAD_AT_CPU;
      own_cpu_data_ = true;
      break;
    case HEAD_AT_GPU:
#ifdef CREMA_CUDA
      if (!cpu_ptr_) {
        MallocHost(&cpu_ptr_, size_, &cpu_malloc_use_cuda_);
        own_cpu_data_ = true;
      }
      CUDA_CHECK(cudaMemcpy(cpu_ptr_, gpu_ptr_, size_, cudaMemcpyDeviceToHost));
      head_ = SYNCED;
#else
      NO_GPU;
#endif
      break;
    case HEAD_AT_CPU:
    case SYNCED:
      break;
  }
}

void SyncedMemory::to_gpu() {
  CheckDevice();
  WriteDeferred();
#ifdef CREMA_CUDA
  switch (head_) {
    case UNINITIALIZED:
      CUDA_CHECK(cudaGetDevice(&device_));
      ++g_allocations;
      DeviceMalloc(&gpu_ptr_, size_);
      CUDA_CHECK(cudaMemset(gpu_ptr_, 0, size_));
      head_ = HEAD_AT_GPU;
      own_gpu_data_ = true;
      break;
    case HEAD_AT_CPU:
      if (!gpu_ptr_) {
        CUDA_CHECK(cudaGetDevice(&device_));
        ++g_allocations;
        DeviceMalloc(&gpu_ptr_, size_);
        own_gpu_data_ = true;
      }
      CUDA_CHECK(cudaMemcpy(gpu_ptr_, cpu_ptr_, size_, cudaMemcpyHostToDevice));
      head_ = SYNCED;
      break;
    case HEAD_AT_GPU:
    case SYNCED:
      break;
  }
#else
  NO_GPU;
#endif
}

const void* SyncedMemory::cpu_data() {
  to_cpu();
  return cpu_ptr_;
}

void SyncedMemory::set_cpu_data(void* data) {
  CHECK(data);
  stamp_ = NewStamp();
  deferred_ = nullptr;
  if (own_cpu_data_) FreeHost(cpu_ptr_, cpu_malloc_use_cuda_);
  cpu_ptr_ = data;
  head_ = HEAD_AT_CPU;
  own_cpu_data_ = false;
}

const void* SyncedMemory::gpu_data() {
  to_gpu();
  return gpu_ptr_;
}

void SyncedMemory::set_gpu_data(void* data) {
#ifdef CREMA_CUDA
  CHECK(data);
  stamp_ = NewStamp();
  deferred_ = nullptr;
  if (own_gpu_data_) CUDA_CHECK(cudaFree(gpu_ptr_));
  gpu_ptr_ = data;
  head_ = HEAD_AT_GPU;
  own_gpu_data_ = false;
#else
  (void)data;
  NO_GPU;
#endif
}

void* SyncedMemory::mutable_cpu_data() {
  stamp_ = NewStamp();
  to_cpu();
  head_ = HEAD_AT_CPU;
  return cpu_ptr_;
}

void* SyncedMemory::mutable_gpu_data() {
  stamp_ = NewStamp();
  to_gpu();
  head_ = HEAD_AT_GPU;
  return gpu_ptr_;
}

#ifdef CREMA_CUDA
void SyncedMemory::async_gpu_push(const cudaStream_t& stream) {
  CHECK(head_ == HEAD_AT_CPU) << "async_gpu_push needs the newest data on the host";
  if (!gpu_ptr_) {
    CUDA_CHECK(cudaGetDevice(&device_));
    ++g_allocations;
    DeviceMalloc(&gpu_ptr_, size_);
    own_gpu_data_ = true;
  }
  CUDA_CHECK(cudaMemcpyAsync(gpu_ptr_, cpu_ptr_, size_, cudaMemcpyHostToDevice, stream));
  // The caller synchronises the stream before reading the device copy.
  head_ = SYNCED;
}
#endif

uint64_t SyncedMemory::stamp() {
  if (exposed_.load() > 0) stamp_ = NewStamp();
  return stamp_;
}

void SyncedMemory::Expose() {
  ++exposed_;
  stamp_ = NewStamp();
  WriteDeferred();
}

void SyncedMemory::Defer(DeferredContents* source) {
  deferred_ = nullptr;
  to_cpu();  // a host copy to write into later
  head_ = HEAD_AT_CPU;
  stamp_ = NewStamp();
  deferred_ = source;
  if (exposed_.load() > 0) WriteDeferred();
}

void SyncedMemory::WriteDeferred() {
  if (!deferred_) return;
  DeferredContents* source = deferred_;
  deferred_ = nullptr;
  source->WriteTo(cpu_ptr_);
}

void SyncedMemory::Unexpose() {
  // Writes made through the view since the last look count as changes.
  stamp_ = NewStamp();
  --exposed_;
}

}  // namespace crema
