// InternalThread: the base of every long-lived worker (data readers,
// prefetching layers, solver workers, kernel-pool threads). The child thread
// starts with a copy of its parent's Context (mode, device, solver count,
// rank, root flag) and a fresh seed drawn from the parent's generator.
#ifndef CREMA_INTERNAL_THREAD_HPP_
#define CREMA_INTERNAL_THREAD_HPP_

#include <boost/thread/mutex.hpp>
#include <exception>
#include <memory>
#include <string>

#include "crema/common.hpp"

namespace boost {
class thread;
}

namespace crema {

class InternalThread {
 public:
  InternalThread();
  // Stops the thread. A derived class whose entry uses its own members must
  // call StopInternalThread() in its own destructor, before they go away.
  virtual ~InternalThread();

  // Starts the thread. A thread runs once: starting it again, while it runs
  // or after it stopped, throws std::logic_error.
  void StartInternalThread();
  // Asks the thread to stop (interrupting any blocking wait) and joins it.
  // Safe to call more than once and on a thread never started.
  void StopInternalThread();

  bool is_started() const;

  // Whether the entry ended by throwing, and what it threw.
  bool has_failed() const;
  std::string failure_message() const;
  // Rethrows, in the caller's thread, what escaped the entry (if anything).
  void RethrowIfFailed() const;

 protected:
  // The thread's body. Loops should poll must_stop(); blocking waits on
  // BlockingQueue are interruption points.
  virtual void InternalThreadEntry() {}
  // Called on the worker thread after the entry threw, so a subclass can wake
  // whoever waits on it (push a sentinel, set a flag) instead of leaving it
  // blocked. The failure is already recorded when this runs.
  virtual void OnInternalThreadFailed() {}

  bool must_stop() const;

 private:
  struct ChildContext;
  void Entry(const ChildContext& context);
  void RecordFailure(std::exception_ptr failure, const std::string& message);

  std::unique_ptr<boost::thread> thread_;
  bool started_once_ = false;
  mutable boost::mutex failure_mutex_;
  std::exception_ptr failure_;
  std::string failure_message_;

  DISABLE_COPY_AND_ASSIGN(InternalThread);
};

}  // namespace crema

#endif  // CREMA_INTERNAL_THREAD_HPP_
