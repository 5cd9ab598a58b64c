// ProducerPriority: a producer thread at idle priority while it is ahead,
// back at normal priority when it falls behind or its consumer hurries it,
// and never left at idle priority when it ends. The tests skip where the
// process may not leave the idle priority (there the class does nothing).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <boost/thread.hpp>

#include "crema/util/producer_priority.hpp"
#include "eventually.hpp"

namespace crema {
namespace {

long ThisThreadId() { return syscall(SYS_gettid); }
int PolicyOf(long thread_id) { return sched_getscheduler(static_cast<pid_t>(thread_id)); }

// A producer thread that binds `priority`, then does what the test asks
// (one step at a time) until it is told to end.
class Producer {
 public:
  explicit Producer(ProducerPriority* priority)
      : thread_([this, priority] {
          {
            ProducerPriority::BoundScope bound(priority);
            id_ = ThisThreadId();
            while (!end_) {
              const int ahead = ahead_.load();
              if (ahead >= 0) {
                priority->SetAhead(ahead == 1);
                ahead_ = -1;  // done: the test may look now
              }
              boost::this_thread::yield();
            }
          }
          policy_at_end_ = PolicyOf(id_);
        }) {
    EXPECT_TRUE(Eventually([this] { return id_.load() != 0; }, "the producer to start"));
  }
  ~Producer() { End(); }

  void SetAhead(bool ahead) {
    ahead_ = ahead ? 1 : 0;
    EXPECT_TRUE(Eventually([this] { return ahead_.load() == -1; }, "the producer to act"));
  }
  int End() {
    end_ = true;
    if (thread_.joinable()) thread_.join();
    return policy_at_end_;
  }
  long id() const { return id_; }

 private:
  std::atomic<long> id_{0};
  std::atomic<int> ahead_{-1};
  std::atomic<bool> end_{false};
  int policy_at_end_ = -1;
  boost::thread thread_;
};

class ProducerPriorityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ProducerPriority::Supported()) {
      GTEST_SKIP() << "this process may not leave the idle priority (no CAP_SYS_NICE, "
                      "RLIMIT_NICE below 20): producers keep normal priority";
    }
  }
};

TEST_F(ProducerPriorityTest, ProbingLeavesTheCallerAsItWas) {
  EXPECT_EQ(PolicyOf(ThisThreadId()), SCHED_OTHER);
}

TEST_F(ProducerPriorityTest, AheadRunsIdleBehindRunsNormal) {
  ProducerPriority priority;
  Producer producer(&priority);
  EXPECT_EQ(PolicyOf(producer.id()), SCHED_OTHER);
  producer.SetAhead(true);
  EXPECT_EQ(PolicyOf(producer.id()), SCHED_IDLE);
  EXPECT_TRUE(priority.idle());
  producer.SetAhead(false);
  EXPECT_EQ(PolicyOf(producer.id()), SCHED_OTHER);
  EXPECT_FALSE(priority.idle());
  EXPECT_EQ(PolicyOf(ThisThreadId()), SCHED_OTHER);  // only the producer moved
}

TEST_F(ProducerPriorityTest, ConsumerHurriesAnIdleProducer) {
  ProducerPriority priority;
  Producer producer(&priority);
  producer.SetAhead(true);
  ASSERT_EQ(PolicyOf(producer.id()), SCHED_IDLE);
  priority.Hurry();  // from this thread, the consumer
  EXPECT_EQ(PolicyOf(producer.id()), SCHED_OTHER);
  EXPECT_FALSE(priority.idle());
}

TEST_F(ProducerPriorityTest, ProducerEndsAtNormalPriority) {
  ProducerPriority priority;
  Producer producer(&priority);
  producer.SetAhead(true);
  ASSERT_EQ(PolicyOf(producer.id()), SCHED_IDLE);
  EXPECT_EQ(producer.End(), SCHED_OTHER);  // measured by the thread after its scope
  EXPECT_FALSE(priority.idle());
  priority.Hurry();  // unbound: touches no thread (the id may be reused)
  priority.SetAhead(true);
  EXPECT_FALSE(priority.idle());
}

TEST_F(ProducerPriorityTest, AnUnboundPriorityTouchesNoThread) {
  ProducerPriority priority;
  priority.SetAhead(true);
  EXPECT_FALSE(priority.idle());
  EXPECT_EQ(PolicyOf(ThisThreadId()), SCHED_OTHER);
}

}  // namespace
}  // namespace crema
