// SyncedMemory moves data between host and device only when needed, and
// its head state says where the newest copy is.
#include <gtest/gtest.h>

#include <cstring>
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

TEST(SyncedMemoryTest, ZeroSizeIsValid) {
  SyncedMemory mem(0);
  EXPECT_NE(mem.cpu_data(), nullptr);
}

#ifndef CPU_ONLY
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
#endif

}  // namespace
}  // namespace crema
