// InternalThread: a worker starts once, stops when asked even while blocked,
// stops when destroyed, and reports what it threw instead of vanishing.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/thread.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "crema/internal_thread.hpp"
#include "crema/util/blocking_queue.hpp"

namespace crema {
namespace {

// Spins on must_stop(), counting iterations; its sleep is not an
// interruption point, so only the polling can end it.
class Spinner : public InternalThread {
 public:
  ~Spinner() override { StopInternalThread(); }
  std::atomic<int> iterations{0};
  std::atomic<bool> exited{false};

 protected:
  void InternalThreadEntry() override {
    while (!must_stop()) {
      iterations++;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    exited = true;
  }
};

// Blocks on an empty queue until interrupted.
class QueueWaiter : public InternalThread {
 public:
  ~QueueWaiter() override { StopInternalThread(); }
  BlockingQueue<int> queue;
  std::atomic<bool> waiting{false};
  std::atomic<int> received{0};

 protected:
  void InternalThreadEntry() override {
    waiting = true;
    while (!must_stop()) received += queue.pop();
  }
};

// Throws from its entry.
class Thrower : public InternalThread {
 public:
  ~Thrower() override { StopInternalThread(); }
  std::atomic<bool> notified{false};

 protected:
  void InternalThreadEntry() override { throw std::runtime_error("disk on fire"); }
  void OnInternalThreadFailed() override { notified = true; }
};

void WaitUntil(const std::atomic<bool>& flag) {
  for (int i = 0; i < 5000 && !flag; ++i) {
    boost::this_thread::sleep_for(boost::chrono::milliseconds(1));
  }
}

TEST(InternalThreadTest, StartAndStop) {
  Spinner spinner;
  EXPECT_FALSE(spinner.is_started());
  spinner.StartInternalThread();
  EXPECT_TRUE(spinner.is_started());
  while (spinner.iterations < 3) boost::this_thread::sleep_for(boost::chrono::milliseconds(1));
  spinner.StopInternalThread();
  EXPECT_FALSE(spinner.is_started());
  EXPECT_TRUE(spinner.exited);
  const int after_stop = spinner.iterations;
  boost::this_thread::sleep_for(boost::chrono::milliseconds(5));
  EXPECT_EQ(spinner.iterations, after_stop);
}

TEST(InternalThreadTest, StopTwiceAndStopUnstartedAreHarmless) {
  Spinner never_started;
  never_started.StopInternalThread();
  Spinner spinner;
  spinner.StartInternalThread();
  spinner.StopInternalThread();
  spinner.StopInternalThread();
  EXPECT_FALSE(spinner.is_started());
}

TEST(InternalThreadTest, StopWakesThreadBlockedOnEmptyQueue) {
  QueueWaiter waiter;
  waiter.StartInternalThread();
  WaitUntil(waiter.waiting);
  waiter.queue.push(5);
  while (waiter.received != 5) boost::this_thread::sleep_for(boost::chrono::milliseconds(1));
  boost::this_thread::sleep_for(boost::chrono::milliseconds(10));  // now blocked in pop()
  waiter.StopInternalThread();
  EXPECT_FALSE(waiter.is_started());
  EXPECT_FALSE(waiter.has_failed());  // being interrupted is not a failure
}

TEST(InternalThreadTest, RestartIsRefused) {
  Spinner spinner;
  spinner.StartInternalThread();
  EXPECT_THROW(spinner.StartInternalThread(), std::logic_error);  // while running
  spinner.StopInternalThread();
  EXPECT_THROW(spinner.StartInternalThread(), std::logic_error);  // after stopping
  EXPECT_FALSE(spinner.is_started());
}

TEST(InternalThreadTest, DestructorStopsRunningThread) {
  std::atomic<bool> waiting{false};
  {
    QueueWaiter waiter;
    waiter.StartInternalThread();
    WaitUntil(waiter.waiting);
    waiting = waiter.waiting.load();
  }  // joins here: a thread left running would hang or crash the test
  EXPECT_TRUE(waiting);
}

// Only the base destructor stops this one, and its entry touches base state.
class BaseStopped : public InternalThread {
 public:
  std::atomic<bool> running{false};

 protected:
  void InternalThreadEntry() override {
    running = true;
    while (!must_stop()) boost::this_thread::sleep_for(boost::chrono::microseconds(200));
  }
};

TEST(InternalThreadTest, BaseDestructorStopsThread) {
  auto* thread = new BaseStopped;
  thread->StartInternalThread();
  WaitUntil(thread->running);
  InternalThread* base = thread;
  base->StopInternalThread();
  delete thread;
  SUCCEED();
}

TEST(InternalThreadTest, ExceptionInEntryReachesOwner) {
  Thrower thrower;
  thrower.StartInternalThread();
  WaitUntil(thrower.notified);
  thrower.StopInternalThread();
  EXPECT_TRUE(thrower.notified);
  EXPECT_TRUE(thrower.has_failed());
  EXPECT_EQ(thrower.failure_message(), "disk on fire");
  try {
    thrower.RethrowIfFailed();
    FAIL() << "the worker's exception was not rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "disk on fire");
  }
}

TEST(InternalThreadTest, CleanExitIsNotAFailure) {
  Spinner spinner;
  spinner.StartInternalThread();
  spinner.StopInternalThread();
  EXPECT_FALSE(spinner.has_failed());
  EXPECT_NO_THROW(spinner.RethrowIfFailed());
}

TEST(InternalThreadTest, ManyThreadsStopPromptly) {
  std::vector<std::unique_ptr<QueueWaiter>> waiters;
  for (int i = 0; i < 8; ++i) {
    waiters.emplace_back(new QueueWaiter);
    waiters.back()->StartInternalThread();
  }
  for (auto& w : waiters) WaitUntil(w->waiting);
  for (auto& w : waiters) w->StopInternalThread();
  for (auto& w : waiters) EXPECT_FALSE(w->is_started());
}

}  // namespace
}  // namespace crema
