// A thread-safe FIFO queue: the only channel between Crema's threads.
// pop() waits for an element and is a boost interruption point, so a thread
// blocked on an empty queue still stops when asked.
#ifndef CREMA_UTIL_BLOCKING_QUEUE_HPP_
#define CREMA_UTIL_BLOCKING_QUEUE_HPP_

#include <boost/thread/condition_variable.hpp>
#include <boost/thread/mutex.hpp>
#include <cstddef>
#include <queue>
#include <string>

#include "crema/common.hpp"

namespace crema {

template <typename T>
class BlockingQueue {
 public:
  // name appears in the starvation message, so a slow pipeline can be traced;
  // queues whose consumers are meant to idle (a pool's task queue) pass
  // report_starvation false.
  explicit BlockingQueue(std::string name = "queue", bool report_starvation = true)
      : name_(std::move(name)), report_starvation_(report_starvation) {}

  void push(const T& value) {
    {
      boost::mutex::scoped_lock lock(mutex_);
      queue_.push(value);
    }
    not_empty_.notify_one();
  }

  // Takes the front element if there is one; never waits.
  bool try_pop(T* value) {
    boost::mutex::scoped_lock lock(mutex_);
    if (queue_.empty()) return false;
    *value = queue_.front();
    queue_.pop();
    return true;
  }

  // Waits for an element and takes it. Throws boost::thread_interrupted
  // when the waiting thread is interrupted.
  T pop() {
    boost::mutex::scoped_lock lock(mutex_);
    WaitForElement(lock);
    T value = queue_.front();
    queue_.pop();
    return value;
  }

  // Reads the front element without taking it; never waits.
  bool try_peek(T* value) {
    boost::mutex::scoped_lock lock(mutex_);
    if (queue_.empty()) return false;
    *value = queue_.front();
    return true;
  }

  // Waits for an element and returns a copy of it, leaving it in the queue.
  T peek() {
    boost::mutex::scoped_lock lock(mutex_);
    WaitForElement(lock);
    return queue_.front();
  }

  size_t size() const {
    boost::mutex::scoped_lock lock(mutex_);
    return queue_.size();
  }

  const std::string& name() const { return name_; }
  // How many times a consumer found this queue empty and had to wait.
  size_t starved_count() const {
    boost::mutex::scoped_lock lock(mutex_);
    return starved_count_;
  }

 private:
  void WaitForElement(boost::mutex::scoped_lock& lock) {
    if (queue_.empty()) {
      ++starved_count_;
      // Once per queue and then rarely: a data pipeline that cannot keep up
      // shows in the log without flooding it.
      if (report_starvation_ && (starved_count_ == 1 || starved_count_ % 1000 == 0)) {
        LOG(INFO) << "Waiting for data: queue '" << name_ << "' is empty (" << starved_count_
                  << " waits so far)";
      }
    }
    while (queue_.empty()) not_empty_.wait(lock);
  }

  const std::string name_;
  const bool report_starvation_;
  mutable boost::mutex mutex_;
  boost::condition_variable not_empty_;
  std::queue<T> queue_;
  size_t starved_count_ = 0;

  DISABLE_COPY_AND_ASSIGN(BlockingQueue);
};

}  // namespace crema

#endif  // CREMA_UTIL_BLOCKING_QUEUE_HPP_
