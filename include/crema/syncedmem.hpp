// A buffer that lives on the host, the device, or both, and is copied
// between them lazily, only when the side asked for is out of date.
#ifndef CREMA_SYNCEDMEM_HPP_
#define CREMA_SYNCEDMEM_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "crema/common.hpp"

namespace crema {

// Host memory for buffers that may be copied to a GPU: pinned (page-locked)
// when the calling thread is in GPU mode, so copies can be asynchronous.
void MallocHost(void** ptr, size_t size, bool* use_cuda);
void FreeHost(void* ptr, bool use_cuda);
#ifdef CREMA_CUDA
// cudaMalloc whose failure for lack of memory is a MemoryError naming the
// bytes asked and those free (other CUDA failures stay CUDA_CHECKs).
void DeviceMalloc(void** ptr, size_t size);
#endif

// Contents held elsewhere, in another layout, until someone reads them (a
// folded convolution's output in oneDNN's layout): WriteTo puts them into a
// memory's host copy.
class DeferredContents {
 public:
  virtual ~DeferredContents() = default;
  virtual void WriteTo(void* host) = 0;
};

class SyncedMemory {
 public:
  // Where the newest copy of the data is.
  enum SyncedHead { UNINITIALIZED, HEAD_AT_CPU, HEAD_AT_GPU, SYNCED };

  SyncedMemory();
  explicit SyncedMemory(size_t size);
  ~SyncedMemory();

  const void* cpu_data();
  const void* gpu_data();
  void* mutable_cpu_data();
  void* mutable_gpu_data();
  // Uses memory the caller owns (and keeps alive) as the host copy.
  void set_cpu_data(void* data);
  void set_gpu_data(void* data);
#ifdef CREMA_CUDA
  // Starts copying the host data to the device on the given stream; the
  // caller synchronises the stream before using the device copy.
  void async_gpu_push(const cudaStream_t& stream);
#endif

  SyncedHead head() const { return head_; }
  size_t size() const { return size_; }

  // A stamp of the contents, for caches of values computed from them (a
  // convolution's packed weights): it changes whenever the contents may
  // have changed, and no two memories, nor two states of one, share a stamp.
  // Every write is announced by a mutable_* or set_* call, which takes a new
  // stamp; so a pointer from mutable_cpu_data() may be written through only
  // until the next call into a net (the rule for C++ callers). Writers that
  // keep their pointer longer (Python's numpy views) hold the memory exposed
  // (Expose) for as long as they keep it, and while any do, every call
  // returns a new stamp: the contents count as changed at each look.
  uint64_t stamp();
  void Expose();
  void Unexpose();

  // Makes `source` the contents (a write: a new stamp). They are written
  // into the host copy when anyone asks for the data (any *_data call, and
  // so a copy to the device) or the memory is exposed; another Defer or a
  // set_*_data drops them unwritten. So a pointer from cpu_data() may be
  // read only until the next call into a net (the rule for C++ callers).
  // The source must outlive the deferral or end it (WriteDeferred).
  void Defer(DeferredContents* source);
  // Writes deferred contents into the host copy now.
  void WriteDeferred();
  bool DeferredTo(const DeferredContents* source) const { return deferred_ == source; }

  // Host and device buffers allocated so far by this process: a steady-state
  // training step must not add to it.
  static uint64_t allocations();

 private:
  void CheckDevice();
  void to_cpu();
  void to_gpu();

  void* cpu_ptr_ = nullptr;
  void* gpu_ptr_ = nullptr;
  size_t size_ = 0;
  SyncedHead head_ = UNINITIALIZED;
  bool own_cpu_data_ = false;
  bool cpu_malloc_use_cuda_ = false;
  bool own_gpu_data_ = false;
  int device_ = -1;
  std::atomic<uint64_t> stamp_;
  std::atomic<int> exposed_{0};
  DeferredContents* deferred_ = nullptr;

  DISABLE_COPY_AND_ASSIGN(SyncedMemory);
};

}  // namespace crema

#endif  // CREMA_SYNCEDMEM_HPP_
