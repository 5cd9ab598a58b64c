#include "crema/syncedmem.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace crema {

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

uint64_t SyncedMemory::allocations() { return g_allocations.load(); }

void MallocHost(void** ptr, size_t size, bool* use_cuda) {
  ++g_allocations;
#ifndef CPU_ONLY
  if (Context::mode() == Context::GPU) {
    CUDA_CHECK(cudaMallocHost(ptr, size));
    *use_cuda = true;
    return;
  }
#endif
  // 64-byte alignment suits every vector unit the kernels may use.
  *ptr = std::aligned_alloc(64, ((size + 63) / 64) * 64 + (size == 0 ? 64 : 0));
  *use_cuda = false;
  CHECK(*ptr) << "host allocation of " << size << " bytes failed";
}

void FreeHost(void* ptr, bool use_cuda) {
#ifndef CPU_ONLY
  if (use_cuda) {
    CUDA_CHECK(cudaFreeHost(ptr));
    return;
  }
#else
  (void)use_cuda;
#endif
  std::free(ptr);
}

SyncedMemory::SyncedMemory() {
#ifndef CPU_ONLY
  if (Context::DeviceCount() > 0) CUDA_CHECK(cudaGetDevice(&device_));
#endif
}

SyncedMemory::SyncedMemory(size_t size) : SyncedMemory() { size_ = size; }

SyncedMemory::~SyncedMemory() {
  CheckDevice();
  if (cpu_ptr_ && own_cpu_data_) FreeHost(cpu_ptr_, cpu_malloc_use_cuda_);
#ifndef CPU_ONLY
  if (gpu_ptr_ && own_gpu_data_) CUDA_CHECK(cudaFree(gpu_ptr_));
#endif
}

// Device memory must be used on the device it was allocated on.
void SyncedMemory::CheckDevice() {
#if !defined(CPU_ONLY) && !defined(NDEBUG)
  if (gpu_ptr_) {
    int device;
    cudaGetDevice(&device);
    CHECK_EQ(device, device_) << "SyncedMemory used on a device it was not allocated on";
  }
#endif
}

void SyncedMemory::to_cpu() {
  CheckDevice();
  switch (head_) {
    case UNINITIALIZED:
      MallocHost(&cpu_ptr_, size_, &cpu_malloc_use_cuda_);
      std::memset(cpu_ptr_, 0, size_);
      head_ = HEAD_AT_CPU;
      own_cpu_data_ = true;
      break;
    case HEAD_AT_GPU:
#ifndef CPU_ONLY
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
#ifndef CPU_ONLY
  switch (head_) {
    case UNINITIALIZED:
      CUDA_CHECK(cudaGetDevice(&device_));
      ++g_allocations;
      CUDA_CHECK(cudaMalloc(&gpu_ptr_, size_));
      CUDA_CHECK(cudaMemset(gpu_ptr_, 0, size_));
      head_ = HEAD_AT_GPU;
      own_gpu_data_ = true;
      break;
    case HEAD_AT_CPU:
      if (!gpu_ptr_) {
        CUDA_CHECK(cudaGetDevice(&device_));
        ++g_allocations;
        CUDA_CHECK(cudaMalloc(&gpu_ptr_, size_));
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
#ifndef CPU_ONLY
  CHECK(data);
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
  to_cpu();
  head_ = HEAD_AT_CPU;
  return cpu_ptr_;
}

void* SyncedMemory::mutable_gpu_data() {
  to_gpu();
  head_ = HEAD_AT_GPU;
  return gpu_ptr_;
}

#ifndef CPU_ONLY
void SyncedMemory::async_gpu_push(const cudaStream_t& stream) {
  CHECK(head_ == HEAD_AT_CPU) << "async_gpu_push needs the newest data on the host";
  if (!gpu_ptr_) {
    CUDA_CHECK(cudaGetDevice(&device_));
    ++g_allocations;
    CUDA_CHECK(cudaMalloc(&gpu_ptr_, size_));
    own_gpu_data_ = true;
  }
  CUDA_CHECK(cudaMemcpyAsync(gpu_ptr_, cpu_ptr_, size_, cudaMemcpyHostToDevice, stream));
  // The caller synchronises the stream before reading the device copy.
  head_ = SYNCED;
}
#endif

}  // namespace crema
