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
#include "eventually.hpp"

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

// Whether flag becomes true (see Eventually).
::testing::AssertionResult BecomesTrue(const std::atomic<bool>& flag, const char* what) {
  return Eventually([&] { return flag.load(); }, what);
}

TEST(InternalThreadTest, StartAndStop) {
  Spinner spinner;
  EXPECT_FALSE(spinner.is_started());
  spinner.StartInternalThread();
  EXPECT_TRUE(spinner.is_started());
  ASSERT_TRUE(Eventually([&] { return spinner.iterations >= 3; }, "3 iterations"));
  spinner.StopInternalThread();
  EXPECT_FALSE(spinner.is_started());
  EXPECT_TRUE(spinner.exited);  // joined: the loop has ended
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
  // Each time the worker finds the queue empty it counts a wait, then blocks.
  ASSERT_TRUE(Eventually([&] { return waiter.queue.starved_count() >= 1; }, "the first wait"));
  waiter.queue.push(5);
  ASSERT_TRUE(Eventually([&] { return waiter.received == 5 && waiter.queue.starved_count() >= 2; },
                         "the value, then the worker blocked in pop() again"));
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
    ASSERT_TRUE(BecomesTrue(waiter.waiting, "the worker to start"));
    waiting = waiter.waiting.load();
  }  // joins here: a thread left running would hang or crash the test
  EXPECT_TRUE(waiting);
}

// Has no destructor of its own, so only the base destructor can stop it.
// After its first step its entry touches nothing of the derived object: what
// it reports goes to flags the test owns.
class BaseStopped : public InternalThread {
 public:
  BaseStopped(std::atomic<bool>* running, std::atomic<bool>* exited)
      : running_(running), exited_(exited) {}

 protected:
  void InternalThreadEntry() override {
    std::atomic<bool>* exited = exited_;
    struct SetOnExit {
      std::atomic<bool>* flag;
      ~SetOnExit() { *flag = true; }
    } set_on_exit{exited};
    *running_ = true;
    while (!must_stop()) boost::this_thread::sleep_for(boost::chrono::microseconds(200));
  }

 private:
  std::atomic<bool>* running_;
  std::atomic<bool>* exited_;
};

TEST(InternalThreadTest, BaseDestructorStopsThread) {
  std::atomic<bool> running{false}, exited{false};
  std::unique_ptr<InternalThread> thread(new BaseStopped(&running, &exited));
  thread->StartInternalThread();
  ASSERT_TRUE(BecomesTrue(running, "the worker to start"));
  thread.reset();  // ~InternalThread alone must stop and join the worker
  EXPECT_TRUE(exited);
}

TEST(InternalThreadTest, ExceptionInEntryReachesOwner) {
  Thrower thrower;
  thrower.StartInternalThread();
  ASSERT_TRUE(BecomesTrue(thrower.notified, "the failure to be reported"));
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
  for (auto& w : waiters) ASSERT_TRUE(BecomesTrue(w->waiting, "every worker to start"));
  for (auto& w : waiters) w->StopInternalThread();
  for (auto& w : waiters) EXPECT_FALSE(w->is_started());
}

}  // namespace
}  // namespace crema
