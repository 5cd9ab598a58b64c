// SyncedMemory moves data between host and device only when needed, and
// its head state says where the newest copy is.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "crema/syncedmem.hpp"
#include "crema/util/math_functions.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

TEST(SyncedMemoryTest, StartsUninitialized) {
  SyncedMemory mem(10);
  EXPECT_EQ(mem.head(), SyncedMemory::UNINITIALIZED);
  EXPECT_EQ(mem.size(), 10u);
  SyncedMemory* heap = new SyncedMemory(10 * sizeof(float));
  EXPECT_EQ(heap->size(), 10 * sizeof(float));
  delete heap;
}

TEST(SyncedMemoryTest, FirstCpuAccessAllocatesZeroes) {
  SyncedMemory mem(16);
  const unsigned char* bytes = static_cast<const unsigned char*>(mem.cpu_data());
  ASSERT_NE(bytes, nullptr);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bytes[i], 0);
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
  EXPECT_EQ(mem.mutable_cpu_data(), static_cast<const void*>(bytes));  // no reallocation
}

TEST(SyncedMemoryTest, CpuWriteIsKept) {
  SyncedMemory mem(10);
  std::memset(mem.mutable_cpu_data(), 1, 10);
  const char* bytes = static_cast<const char*>(mem.cpu_data());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bytes[i], 1);
}

TEST(SyncedMemoryTest, BorrowedHostMemoryIsUsedAndNotFreed) {
  std::vector<float> owned(4, 2.5f);
  {
    SyncedMemory mem(4 * sizeof(float));
    mem.set_cpu_data(owned.data());
    EXPECT_EQ(mem.cpu_data(), owned.data());
    EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
    static_cast<float*>(mem.mutable_cpu_data())[1] = 7.f;
  }  // must not free `owned`
  EXPECT_EQ(owned[1], 7.f);
  EXPECT_EQ(owned[0], 2.5f);
}

// The stamp (what caches of values computed from the contents compare): new
// at every announced write, the same across reads, new at every look while
// a writer holds the memory exposed, and never shared by two memories.
TEST(SyncedMemoryTest, StampChangesWithWritesAndWhileExposed) {
  SyncedMemory memory(16), other(16);
  EXPECT_NE(memory.stamp(), other.stamp());
  const uint64_t fresh = memory.stamp();
  memory.cpu_data();
  EXPECT_EQ(memory.stamp(), fresh) << "a read is not a write";
  memory.mutable_cpu_data();
  const uint64_t written = memory.stamp();
  EXPECT_NE(written, fresh);
  EXPECT_EQ(memory.stamp(), written);
  memory.Expose();
  const uint64_t exposed = memory.stamp();
  EXPECT_NE(exposed, written);
  EXPECT_NE(memory.stamp(), exposed) << "an exposed memory may change at any time";
  memory.Unexpose();
  const uint64_t after = memory.stamp();
  EXPECT_EQ(memory.stamp(), after);
  float value = 0;
  memory.set_cpu_data(&value);
  EXPECT_NE(memory.stamp(), after);
}

// Deferred contents: written into the host copy at the first look (read or
// write), never when another deferral or set_cpu_data replaces them, and at
// once when the memory is exposed.
TEST(SyncedMemoryTest, DeferredContentsAreWrittenWhenLookedAt) {
  struct Source : DeferredContents {
    explicit Source(float value) : value(value) {}
    void WriteTo(void* host) override {
      ++writes;
      static_cast<float*>(host)[0] = value;
    }
    float value;
    int writes = 0;
  } seven(7), eight(8);
  SyncedMemory memory(sizeof(float));
  const uint64_t before = memory.stamp();
  memory.Defer(&seven);
  EXPECT_NE(memory.stamp(), before) << "deferred contents are a write";
  EXPECT_TRUE(memory.DeferredTo(&seven));
  EXPECT_EQ(static_cast<const float*>(memory.cpu_data())[0], 7);
  EXPECT_EQ(seven.writes, 1);
  memory.cpu_data();
  EXPECT_EQ(seven.writes, 1) << "written once";
  memory.Defer(&seven);
  memory.Defer(&eight);  // replaces seven's unwritten contents
  EXPECT_EQ(static_cast<float*>(memory.mutable_cpu_data())[0], 8);
  EXPECT_EQ(seven.writes, 1);
  EXPECT_EQ(eight.writes, 1);
  float borrowed = 3;
  memory.Defer(&seven);
  memory.set_cpu_data(&borrowed);
  EXPECT_EQ(static_cast<const float*>(memory.cpu_data())[0], 3);
  EXPECT_EQ(seven.writes, 1);
  memory.Expose();
  memory.Defer(&eight);
  EXPECT_EQ(eight.writes, 2) << "an exposed memory is written at once";
  EXPECT_EQ(borrowed, 8);
  memory.Unexpose();
}

TEST(SyncedMemoryTest, ZeroSizeIsValid) {
  SyncedMemory mem(0);
  EXPECT_NE(mem.cpu_data(), nullptr);
}

#ifdef CREMA_CUDA
TEST_F(GpuTest, SyncedMemoryRoundTripsThroughDevice) {
  SyncedMemory mem(10);
  std::memset(mem.mutable_cpu_data(), 1, 10);
  const void* gpu = mem.gpu_data();
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  std::vector<char> back(10);
  CUDA_CHECK(cudaMemcpy(back.data(), gpu, 10, cudaMemcpyDeviceToHost));
  for (char c : back) EXPECT_EQ(c, 1);
  CUDA_CHECK(cudaMemset(mem.mutable_gpu_data(), 2, 10));
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_GPU);
  const char* host = static_cast<const char*>(mem.cpu_data());
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(host[i], 2);
}

TEST_F(GpuTest, SyncedMemoryAsyncPush) {
  SyncedMemory mem(64);
  std::memset(mem.mutable_cpu_data(), 3, 64);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  mem.async_gpu_push(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaStreamDestroy(stream));
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
  std::vector<char> back(64);
  CUDA_CHECK(cudaMemcpy(back.data(), mem.gpu_data(), 64, cudaMemcpyDeviceToHost));
  for (char c : back) EXPECT_EQ(c, 3);
}

// A GPU without the memory asked for is a MemoryError (the tool prints it
// and exits 1), not a CUDA_CHECK abort; the device stays usable after it.
TEST_F(GpuTest, DeviceOutOfMemoryIsAMemoryError) {
  SyncedMemory huge(size_t(1) << 50);  // 1 PiB: no GPU has it
  try {
    huge.gpu_data();
    FAIL() << "a 1 PiB device allocation succeeded";
  } catch (const MemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("is out of memory: cannot allocate 1.05e+06 GiB"),
              std::string::npos)
        << e.what();
  }
  SyncedMemory small(16);
  std::memset(small.mutable_cpu_data(), 4, 16);
  std::vector<char> back(16);
  CUDA_CHECK(cudaMemcpy(back.data(), small.gpu_data(), 16, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back[15], 4);
}
#endif

// The host side of the same path, and the per-thread allocation limit.
TEST(SyncedMemoryTest, HostExhaustionAndTheLimitAreMemoryErrors) {
  SyncedMemory huge(size_t(1) << 50);
  EXPECT_THROW(huge.cpu_data(), MemoryError);
  const size_t before = Context::max_allocation();
  Context::set_max_allocation(1000);
  SyncedMemory over(1001);
  std::string message;
  try {
    over.cpu_data();
  } catch (const MemoryError& e) {
    message = e.what();
  }
  Context::set_max_allocation(before);
  EXPECT_EQ(message,
            "cannot allocate 1001 bytes of host memory: above this thread's allocation limit of "
            "1000 bytes");
  SyncedMemory at_limit(1000);
  Context::set_max_allocation(1000);
  EXPECT_NO_THROW(at_limit.cpu_data());
  Context::set_max_allocation(before);
}

}  // namespace
}  // namespace crema
