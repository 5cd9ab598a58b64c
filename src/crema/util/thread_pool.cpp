#include "crema/util/thread_pool.hpp"

extern "C" {
#include <cblas.h>
}

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <boost/thread/thread.hpp>
#include <chrono>
#include <cstdlib>
#include <exception>

#include "crema/internal_thread.hpp"
#include "crema/util/blocking_queue.hpp"

namespace crema {

namespace {

int Cores() {
  const int cores = static_cast<int>(boost::thread::hardware_concurrency());
  return cores > 0 ? cores : 1;
}

int DefaultThreadBudget() {
  if (const char* env = std::getenv("CREMA_NUM_THREADS")) {
    char* end = nullptr;
    const long long n = std::strtoll(env, &end, 10);
    if (end != env && *end == '\0') {
      RequireRunnableThreads(n, "CREMA_NUM_THREADS");
      return static_cast<int>(n);
    }
    CREMA_FAIL("CREMA_NUM_THREADS='" << env << "' is not a number of threads");
  }
  return Cores();
}

boost::mutex& BudgetMutex() {
  static boost::mutex mutex;
  return mutex;
}

// Written under BudgetMutex; read without it once set (every oneDNN pass
// asks).
std::atomic<int>& BudgetValue() {
  static std::atomic<int> budget{0};  // 0: not set yet
  return budget;
}

std::unique_ptr<ThreadPool>& GlobalPool() {
  static std::unique_ptr<ThreadPool> pool;
  return pool;
}

// True on a pool worker, so a kernel that parallelises inside a job runs inline.
thread_local bool inside_pool_job = false;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls ready() until it holds, for at most about 50 microseconds, yielding
// the core between polls: a thread that sleeps at once pays a futex wake-up
// at nearly every kernel of a training step, and one that polls much longer
// takes the core from others. The yields leave the data layer's prefetch
// thread its share of the core (scripts/bench/data_pipeline.sh; the
// measurements behind the 50 are in docs/bench-report.md).
template <typename Ready>
void SpinUntil(const Ready& ready) {
  constexpr auto kSpin = std::chrono::microseconds(50);
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return;
    sched_yield();  // a thread waiting for this core (the data prefetch) goes first
  }
}

}  // namespace

int ThreadBudget() {
  const int set = BudgetValue().load(std::memory_order_acquire);
  if (set != 0) return set;
  boost::mutex::scoped_lock lock(BudgetMutex());
  if (BudgetValue() == 0) {
    openblas_set_num_threads(1);  // before the budget shows as set
    BudgetValue() = DefaultThreadBudget();
  }
  return BudgetValue();
}

int MaxThreads() { return std::max(16, 4 * Cores()); }

void RequireRunnableThreads(int64_t n, const std::string& what) {
  CREMA_REQUIRE(n >= 1 && n <= MaxThreads(),
                what << " is " << n << "; it must be between 1 and " << MaxThreads()
                     << " (4 threads per core on this machine of " << Cores() << ")");
}

void SetThreadBudget(int n) {
  RequireRunnableThreads(n, "the thread budget");
  boost::mutex::scoped_lock lock(BudgetMutex());
  BudgetValue() = n;
  openblas_set_num_threads(1);
  GlobalPool().reset();  // rebuilt at the new size on next use
}

void BlockingCounter::DecrementCount() {
  boost::mutex::scoped_lock lock(mutex_);
  if (--count_ == 0) done_.notify_all();
}

void BlockingCounter::Wait() {
  // Not an interruption point: the parts still running use the waiter's
  // stack (this counter, the job), so a thread being stopped (an
  // InternalThread's prefetch or solver thread) must wait for them before it
  // unwinds.
  boost::this_thread::disable_interruption no_interruption;
  SpinUntil([this] { return count_.load(std::memory_order_acquire) == 0; });
  // Taken even when polling saw zero: the last DecrementCount may still hold
  // the mutex, and the counter must outlive it.
  boost::mutex::scoped_lock lock(mutex_);
  while (count_ > 0) done_.wait(lock);
}

std::vector<int64_t> BalancedSplit(int64_t n, int parts) {
  // Invariant: callers clamp the number of parts to at least 1.
  CHECK_GE(parts, 1);
  std::vector<int64_t> bounds(parts + 1);
  const int64_t base = n / parts;
  const int64_t extra = n % parts;  // the first `extra` ranges get one more
  bounds[0] = 0;
  for (int i = 0; i < parts; ++i) bounds[i + 1] = bounds[i] + base + (i < extra ? 1 : 0);
  return bounds;
}

// A pool thread: runs the tasks pushed to its own queue until stopped.
class ThreadPool::Worker : public InternalThread {
 public:
  explicit Worker(int index) : tasks_("thread pool worker " + std::to_string(index), false) {}
  ~Worker() override { StopInternalThread(); }
  void Push(const std::function<void()>& task) {
    tasks_.push(task);
    queued_.fetch_add(1, std::memory_order_release);
  }

 protected:
  // After a task, the next one usually comes within microseconds (the next
  // kernel of the same step): the worker polls for it before it sleeps.
  void InternalThreadEntry() override {
    inside_pool_job = true;
    while (!must_stop()) {
      SpinUntil([this] { return queued_.load(std::memory_order_acquire) > 0; });
      std::function<void()> task = tasks_.pop();
      queued_.fetch_sub(1, std::memory_order_relaxed);
      task();
    }
  }

 private:
  BlockingQueue<std::function<void()>> tasks_;
  std::atomic<int> queued_{0};  // tasks pushed and not yet popped
};

ThreadPool::ThreadPool(int num_workers) {
  for (int i = 0; i < num_workers; ++i) {
    workers_.emplace_back(new Worker(i));
    workers_.back()->StartInternalThread();
  }
}

ThreadPool::~ThreadPool() {
  for (auto& worker : workers_) worker->StopInternalThread();
}

ThreadPool& ThreadPool::Global() {
  const int budget = ThreadBudget();
  boost::mutex::scoped_lock lock(BudgetMutex());
  if (!GlobalPool()) GlobalPool().reset(new ThreadPool(budget - 1));
  return *GlobalPool();
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_grain, const RangeFunction& fn) {
  if (n <= 0) return;
  const int64_t grain = min_grain > 0 ? min_grain : 1;
  const int64_t max_parts = (n + grain - 1) / grain;
  int parts = static_cast<int>(std::min<int64_t>(max_parts, num_workers() + 1));
  boost::mutex::scoped_lock busy(busy_mutex_, boost::try_to_lock);
  if (parts <= 1 || inside_pool_job || !busy.owns_lock()) {
    fn(0, n);
    return;
  }
  const std::vector<int64_t> bounds = BalancedSplit(n, parts);
  BlockingCounter pending(parts - 1);
  boost::mutex failure_mutex;
  std::exception_ptr failure;
  for (int part = 1; part < parts; ++part) {
    const int64_t begin = bounds[part], end = bounds[part + 1];
    workers_[part - 1]->Push([&, begin, end] {
      try {
        fn(begin, end);
      } catch (...) {
        boost::mutex::scoped_lock lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
      pending.DecrementCount();
    });
  }
  try {
    fn(bounds[0], bounds[1]);
  } catch (...) {
    boost::mutex::scoped_lock lock(failure_mutex);
    if (!failure) failure = std::current_exception();
  }
  pending.Wait();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace crema
