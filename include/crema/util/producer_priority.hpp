// ProducerPriority: the scheduling priority of a thread that fills a queue
// ahead of its consumer (a data reader, a prefetching layer). While it is
// ahead, it runs at the idle priority (Linux SCHED_IDLE): it takes only the
// CPU time that the solver's threads leave unused and never preempts them.
// On 2 cores, a data thread that preempts one of the two compute threads
// stalls both at the next join; at idle priority LeNet's step fed from an
// LMDB costs what the step fed from memory costs. When the consumer runs
// short the thread is back at normal priority, so that other processes on a
// busy machine cannot starve it.
//
// Leaving the idle priority needs CAP_SYS_NICE or an RLIMIT_NICE of 20
// (`ulimit -e`); where the process may enter it but not leave it, producers
// stay at normal priority throughout (Supported() is false).
#ifndef CREMA_UTIL_PRODUCER_PRIORITY_HPP_
#define CREMA_UTIL_PRODUCER_PRIORITY_HPP_

#include <boost/thread/mutex.hpp>

#include "crema/common.hpp"

namespace crema {

class ProducerPriority {
 public:
  ProducerPriority() = default;
  ~ProducerPriority() { Unbind(); }

  // Whether this process can move a thread to the idle priority and back
  // (probed once, on a thread of its own).
  static bool Supported();

  // The producer calls Bind() when it starts and Unbind() before it ends
  // (BoundScope does both); a thread that is not bound is never touched.
  void Bind();
  void Unbind();
  // The producer, before each unit of work: idle priority when it is ahead
  // of its consumer, normal otherwise.
  void SetAhead(bool ahead);
  // A consumer that found the queue empty: the producer goes back to normal
  // priority now, in the middle of its unit of work.
  void Hurry() { SetAhead(false); }

  // Whether the bound thread runs at the idle priority now (for tests).
  bool idle() const;

  class BoundScope {
   public:
    explicit BoundScope(ProducerPriority* priority) : priority_(priority) { priority_->Bind(); }
    ~BoundScope() { priority_->Unbind(); }

   private:
    ProducerPriority* priority_;
    DISABLE_COPY_AND_ASSIGN(BoundScope);
  };

 private:
  mutable boost::mutex mutex_;
  long thread_id_ = 0;  // the kernel's id of the bound thread, 0 when none
  bool idle_ = false;

  DISABLE_COPY_AND_ASSIGN(ProducerPriority);
};

}  // namespace crema

#endif  // CREMA_UTIL_PRODUCER_PRIORITY_HPP_
