// A fixed pool of worker threads for the CPU kernels: large GEMMs split into
// blocks, convolutions split by images, element-wise ops on large blobs,
// pooling, batch transforms. A GEMM itself always runs on one thread, on
// whichever thread calls it: the pool is the only source of parallelism, so
// the cores are never oversubscribed. The budget is the total number of
// threads doing kernel work at once, the calling thread included.
#ifndef CREMA_UTIL_THREAD_POOL_HPP_
#define CREMA_UTIL_THREAD_POOL_HPP_

#include <algorithm>
#include <atomic>
#include <boost/thread/condition_variable.hpp>
#include <boost/thread/mutex.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crema/common.hpp"

namespace crema {

// The total number of kernel threads (default: CREMA_NUM_THREADS from the
// environment, else the number of cores).
int ThreadBudget();
// Sets the budget: the pool gets n - 1 workers (the caller is the n-th).
// n outside 1..MaxThreads() is a user error.
void SetThreadBudget(int n);

// The most threads of one kind (kernel threads, solver threads) a run may
// ask for: 4 per core, at least 16. More cannot run faster, and many more
// fail to start (the system's thread limit) where they should fail to be
// asked for.
int MaxThreads();
// Fails, naming `what` (a flag, a variable) and the machine's cores, unless
// 1 <= n <= MaxThreads().
void RequireRunnableThreads(int64_t n, const std::string& what);

// Counts outstanding parts of a job; Wait() returns when all are done.
class BlockingCounter {
 public:
  explicit BlockingCounter(int count) : count_(count) {}
  void DecrementCount();
  // Polls the count for up to 50 microseconds before it sleeps: a pool's parts
  // usually end within that, and a futex wake-up costs more.
  void Wait();

 private:
  boost::mutex mutex_;
  boost::condition_variable done_;
  std::atomic<int> count_;  // written under mutex_, read without it while polling
};

// Splits [0, n) into `parts` contiguous ranges whose sizes differ by at most 1.
// Returns parts + 1 boundaries.
std::vector<int64_t> BalancedSplit(int64_t n, int parts);

class ThreadPool {
 public:
  using RangeFunction = std::function<void(int64_t begin, int64_t end)>;

  explicit ThreadPool(int num_workers);
  ~ThreadPool();

  // The process-wide pool, sized by the thread budget.
  static ThreadPool& Global();

  int num_workers() const { return static_cast<int>(workers_.size()); }

  // Calls fn over [0, n) split into balanced ranges of at least min_grain
  // items, one range on the caller and the others on the workers, and returns
  // when all are done. An exception thrown by fn is rethrown here. When the
  // pool is already busy (another thread's job, or a call from inside a
  // job), fn runs over the whole range on the caller instead, so nested and
  // concurrent use never deadlocks nor oversubscribes.
  void ParallelFor(int64_t n, int64_t min_grain, const RangeFunction& fn);

 private:
  class Worker;
  std::vector<std::unique_ptr<Worker>> workers_;
  boost::mutex busy_mutex_;

  DISABLE_COPY_AND_ASSIGN(ThreadPool);
};

// Calls fn(first_plane, end_plane) over `planes` independent planes of
// plane_size values each, on the global pool, in parts of at least ~16K values
// (smaller parts cost more to hand out than they save).
template <typename Fn>
void ParallelForPlanes(int planes, int plane_size, const Fn& fn) {
  const int64_t grain = std::max(1, (16 << 10) / std::max(plane_size, 1));
  ThreadPool::Global().ParallelFor(planes, grain, [&](int64_t begin, int64_t end) {
    fn(static_cast<int>(begin), static_cast<int>(end));
  });
}

}  // namespace crema

#endif  // CREMA_UTIL_THREAD_POOL_HPP_
