// The kernel pool: every index is visited once, ranges are balanced, errors
// come back to the caller, and nested or concurrent use never deadlocks.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/thread.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "crema/internal_thread.hpp"
#include "crema/util/thread_pool.hpp"
#include "eventually.hpp"

namespace crema {
namespace {

TEST(ThreadPoolTest, BalancedSplitCoversRangeEvenly) {
  const std::vector<int64_t> bounds = BalancedSplit(10, 3);
  ASSERT_EQ(bounds.size(), 4u);
  EXPECT_EQ(bounds, (std::vector<int64_t>{0, 4, 7, 10}));
  const std::vector<int64_t> fewer = BalancedSplit(2, 4);
  EXPECT_EQ(fewer, (std::vector<int64_t>{0, 1, 2, 2, 2}));
}

TEST(ThreadPoolTest, VisitsEveryIndexOnce) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> visits(10007);
  for (auto& v : visits) v = 0;
  pool.ParallelFor(10007, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) visits[i]++;
  });
  for (size_t i = 0; i < visits.size(); ++i) ASSERT_EQ(visits[i].load(), 1) << i;
}

TEST(ThreadPoolTest, UsesWorkersAndRespectsGrain) {
  ThreadPool pool(3);
  std::atomic<int> calls{0};
  pool.ParallelFor(1000, 1, [&](int64_t, int64_t) { calls++; });
  EXPECT_EQ(calls.load(), 4);  // 3 workers + the caller
  calls = 0;
  pool.ParallelFor(1000, 600, [&](int64_t, int64_t) { calls++; });
  EXPECT_EQ(calls.load(), 2);  // two ranges of >= 600 items at most
}

TEST(ThreadPoolTest, ExceptionReachesCaller) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.ParallelFor(100, 1,
                                [](int64_t begin, int64_t) {
                                  if (begin > 0) throw std::runtime_error("bad part");
                                }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(100, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 100);
}

TEST(ThreadPoolTest, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.ParallelFor(6, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      pool.ParallelFor(10, 1, [&](int64_t b, int64_t e) { total += e - b; });
    }
  });
  EXPECT_EQ(total.load(), 60);
}

TEST(ThreadPoolTest, ConcurrentCallersAllFinish) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  boost::thread_group callers;
  for (int c = 0; c < 4; ++c) {
    callers.create_thread([&] {
      for (int r = 0; r < 50; ++r) {
        pool.ParallelFor(1000, 10, [&](int64_t b, int64_t e) { total += e - b; });
      }
    });
  }
  callers.join_all();
  EXPECT_EQ(total.load(), 4 * 50 * 1000);
}

TEST(ThreadPoolTest, BudgetSizesTheGlobalPool) {
  const int saved = ThreadBudget();
  SetThreadBudget(3);
  EXPECT_EQ(ThreadBudget(), 3);
  EXPECT_EQ(ThreadPool::Global().num_workers(), 2);
  SetThreadBudget(1);
  EXPECT_EQ(ThreadPool::Global().num_workers(), 0);
  EXPECT_THROW(SetThreadBudget(0), Error);
  SetThreadBudget(saved);
}

// A thread stopped while the parts of its job still run on the workers waits
// for them before it unwinds: they use its stack (the job, the counter).
TEST(ThreadPoolTest, AThreadStoppedDuringAJobWaitsForItsParts) {
  ThreadPool pool(2);
  std::atomic<int> started{0}, finished{0};
  class Runner : public InternalThread {
   public:
    Runner(ThreadPool* pool, std::atomic<int>* started, std::atomic<int>* finished)
        : pool_(pool), started_(started), finished_(finished) {}
    ~Runner() override { StopInternalThread(); }

   protected:
    void InternalThreadEntry() override {
      // The caller's part (from 0) ends at once, so the caller waits for the
      // workers' long parts (uninterruptible sleeps) when it is stopped.
      pool_->ParallelFor(3, 1, [this](int64_t begin, int64_t) {
        ++*started_;
        if (begin > 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ++*finished_;
      });
    }

   private:
    ThreadPool* pool_;
    std::atomic<int>* started_;
    std::atomic<int>* finished_;
  } runner(&pool, &started, &finished);
  runner.StartInternalThread();
  ASSERT_TRUE(Eventually([&] { return started.load() == 3; }, "the three parts to start"));
  runner.StopInternalThread();  // interrupts the runner while its parts run
  EXPECT_EQ(finished.load(), 3);
}

TEST(ThreadPoolTest, BlockingCounterWaitsForAll) {
  BlockingCounter counter(3);
  std::atomic<int> done{0};
  boost::thread_group threads;
  for (int i = 0; i < 3; ++i) {
    threads.create_thread([&] {
      done++;
      counter.DecrementCount();
    });
  }
  counter.Wait();
  EXPECT_EQ(done.load(), 3);
  threads.join_all();
}

}  // namespace
}  // namespace crema
