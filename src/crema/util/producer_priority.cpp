#include "crema/util/producer_priority.hpp"

#include <boost/thread/thread.hpp>

#ifdef __linux__
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace crema {

namespace {

#ifdef __linux__
long CallingThreadId() { return syscall(SYS_gettid); }

bool SetPolicy(long thread_id, int policy) {
  sched_param param{};
  param.sched_priority = 0;
  return sched_setscheduler(static_cast<pid_t>(thread_id), policy, &param) == 0;
}
#endif

}  // namespace

bool ProducerPriority::Supported() {
#ifdef __linux__
  // A thread of its own: the one that tries the switch keeps its priority
  // if the way back is refused.
  static const bool supported = [] {
    bool both_ways = false;
    boost::thread probe([&both_ways] {
      const long self = CallingThreadId();
      both_ways = SetPolicy(self, SCHED_IDLE) && SetPolicy(self, SCHED_OTHER);
    });
    probe.join();
    LOG_IF(INFO, !both_ways) << "Data threads run at normal priority: this process may not "
                                "leave the idle priority (CAP_SYS_NICE or `ulimit -e 20` lets "
                                "them yield to the solver's threads)";
    return both_ways;
  }();
  return supported;
#else
  return false;
#endif
}

void ProducerPriority::Bind() {
#ifdef __linux__
  if (!Supported()) return;
  boost::mutex::scoped_lock lock(mutex_);
  thread_id_ = CallingThreadId();
  idle_ = false;
#endif
}

void ProducerPriority::Unbind() {
  SetAhead(false);
  boost::mutex::scoped_lock lock(mutex_);
  thread_id_ = 0;
}

bool ProducerPriority::idle() const {
  boost::mutex::scoped_lock lock(mutex_);
  return idle_;
}

void ProducerPriority::SetAhead(bool ahead) {
  boost::mutex::scoped_lock lock(mutex_);
  if (thread_id_ == 0 || ahead == idle_) return;
#ifdef __linux__
  // Refused (the limits changed under the process): the thread stays as it is.
  if (SetPolicy(thread_id_, ahead ? SCHED_IDLE : SCHED_OTHER)) idle_ = ahead;
#endif
}

}  // namespace crema
