// BlockingQueue is the only channel between threads: it must keep order,
// lose and duplicate nothing under contention, and let a waiter be stopped.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/thread.hpp>
#include <vector>

#include "crema/util/blocking_queue.hpp"
#include "eventually.hpp"

namespace crema {
namespace {

TEST(BlockingQueueTest, KeepsFifoOrder) {
  BlockingQueue<int> queue;
  for (int i = 0; i < 10; ++i) queue.push(i);
  EXPECT_EQ(queue.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(queue.pop(), i);
  EXPECT_EQ(queue.size(), 0u);
}

TEST(BlockingQueueTest, TryOperationsNeverBlock) {
  BlockingQueue<int> queue;
  int value = -1;
  EXPECT_FALSE(queue.try_pop(&value));
  EXPECT_FALSE(queue.try_peek(&value));
  EXPECT_EQ(value, -1);
  queue.push(7);
  EXPECT_TRUE(queue.try_peek(&value));
  EXPECT_EQ(value, 7);
  EXPECT_EQ(queue.size(), 1u);  // peek leaves it in
  value = -1;
  EXPECT_TRUE(queue.try_pop(&value));
  EXPECT_EQ(value, 7);
  EXPECT_FALSE(queue.try_pop(&value));
}

TEST(BlockingQueueTest, PeekWaitsAndLeavesTheElement) {
  BlockingQueue<int> queue;
  int peeked = -1;
  boost::thread consumer([&] { peeked = queue.peek(); });
  queue.push(3);
  consumer.join();
  EXPECT_EQ(peeked, 3);
  EXPECT_EQ(queue.pop(), 3);
}

TEST(BlockingQueueTest, PopWaitsForAProducer) {
  BlockingQueue<int> queue("waiting");
  int got = -1;
  boost::thread consumer([&] { got = queue.pop(); });
  // The consumer counts a wait when it finds the queue empty, then blocks.
  ASSERT_TRUE(Eventually([&] { return queue.starved_count() >= 1; }, "the consumer to wait"));
  EXPECT_EQ(got, -1);
  queue.push(42);
  consumer.join();
  EXPECT_EQ(got, 42);
}

TEST(BlockingQueueTest, ManyProducersAndConsumersLoseNothing) {
  constexpr int kProducers = 4, kConsumers = 3, kPerProducer = 5000;
  BlockingQueue<int> queue;
  std::vector<std::atomic<int>> seen(kProducers * kPerProducer);
  for (auto& s : seen) s = 0;
  std::atomic<int> consumed{0};
  boost::thread_group consumers, producers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.create_thread([&] {
      for (;;) {
        const int value = queue.pop();
        if (value < 0) return;  // end marker
        seen[value]++;
        consumed++;
      }
    });
  }
  for (int p = 0; p < kProducers; ++p) {
    producers.create_thread([&, p] {
      for (int i = 0; i < kPerProducer; ++i) queue.push(p * kPerProducer + i);
    });
  }
  producers.join_all();
  for (int c = 0; c < kConsumers; ++c) queue.push(-1);
  consumers.join_all();
  EXPECT_EQ(consumed.load(), kProducers * kPerProducer);
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "value " << i;
  EXPECT_EQ(queue.size(), 0u);
}

TEST(BlockingQueueTest, EachProducersOrderIsKept) {
  constexpr int kPerProducer = 2000;
  BlockingQueue<int> queue;
  boost::thread a([&] { for (int i = 0; i < kPerProducer; ++i) queue.push(i); });
  boost::thread b([&] { for (int i = 0; i < kPerProducer; ++i) queue.push(100000 + i); });
  int last_a = -1, last_b = 99999;
  for (int i = 0; i < 2 * kPerProducer; ++i) {
    const int v = queue.pop();
    if (v < 100000) {
      ASSERT_EQ(v, last_a + 1);
      last_a = v;
    } else {
      ASSERT_EQ(v, last_b + 1);
      last_b = v;
    }
  }
  a.join();
  b.join();
}

TEST(BlockingQueueTest, BlockedPopIsInterruptible) {
  BlockingQueue<int> queue;
  std::atomic<bool> interrupted{false};
  boost::thread consumer([&] {
    try {
      queue.pop();
    } catch (const boost::thread_interrupted&) {
      interrupted = true;
    }
  });
  ASSERT_TRUE(Eventually([&] { return queue.starved_count() >= 1; }, "the consumer to block"));
  consumer.interrupt();
  consumer.join();
  EXPECT_TRUE(interrupted);
}

TEST(BlockingQueueTest, BlockedPeekIsInterruptible) {
  BlockingQueue<int> queue;
  std::atomic<bool> interrupted{false};
  boost::thread consumer([&] {
    try {
      queue.peek();
    } catch (const boost::thread_interrupted&) {
      interrupted = true;
    }
  });
  ASSERT_TRUE(Eventually([&] { return queue.starved_count() >= 1; }, "the consumer to block"));
  consumer.interrupt();
  consumer.join();
  EXPECT_TRUE(interrupted);
}

}  // namespace
}  // namespace crema
