#include "crema/internal_thread.hpp"

#include <boost/thread.hpp>
#include <stdexcept>

namespace crema {

// What a child thread inherits from the thread that starts it.
struct InternalThread::ChildContext {
  Context::Mode mode;
  int device;
  int solver_count;
  int solver_rank;
  int local_solver_count;
  bool multiprocess;
  size_t max_allocation;
  uint64_t seed;
};

// Out of line: unique_ptr<boost::thread> needs the complete type here.
InternalThread::InternalThread() = default;

InternalThread::~InternalThread() { StopInternalThread(); }

bool InternalThread::is_started() const { return thread_ && thread_->joinable(); }

// Called from the worker itself, so it asks its own thread: the owner may
// still be assigning thread_ when the worker starts.
bool InternalThread::must_stop() const { return boost::this_thread::interruption_requested(); }

void InternalThread::StartInternalThread() {
  if (started_once_) {
    throw std::logic_error("InternalThread: a thread runs once and cannot be started again");
  }
  started_once_ = true;
  ChildContext context;
  context.mode = Context::mode();
  context.device = Context::device();
  context.solver_count = Context::solver_count();
  context.solver_rank = Context::solver_rank();
  context.local_solver_count = Context::local_solver_count();
  context.multiprocess = Context::multiprocess();
  context.max_allocation = Context::max_allocation();
  // Each child gets its own stream, reproducible from the parent's seed.
  RNG& parent_rng = Context::rng();
  const uint64_t high = parent_rng();
  context.seed = (high << 32) | parent_rng();
  thread_.reset(new boost::thread(&InternalThread::Entry, this, context));
}

void InternalThread::Entry(const ChildContext& context) {
  try {
#ifdef CREMA_CUDA
    if (context.mode == Context::GPU) Context::SetDevice(context.device);
#endif
    Context::set_mode(context.mode);
    Context::set_solver_count(context.solver_count);
    Context::set_solver_rank(context.solver_rank);
    Context::set_local_solver_count(context.local_solver_count);
    Context::set_multiprocess(context.multiprocess);
    Context::set_max_allocation(context.max_allocation);
    Context::set_random_seed(context.seed);
    InternalThreadEntry();
  } catch (const boost::thread_interrupted&) {
    // Asked to stop while blocked: the normal way out of a waiting loop.
  } catch (const std::exception& e) {
    RecordFailure(std::current_exception(), e.what());
  } catch (...) {
    RecordFailure(std::current_exception(), "unknown exception");
  }
}

void InternalThread::RecordFailure(std::exception_ptr failure, const std::string& message) {
  LOG(ERROR) << "Worker thread failed: " << message;
  {
    boost::mutex::scoped_lock lock(failure_mutex_);
    failure_ = failure;
    failure_message_ = message;
  }
  OnInternalThreadFailed();
}

void InternalThread::StopInternalThread() {
  if (is_started()) {
    thread_->interrupt();
    if (thread_->get_id() != boost::this_thread::get_id()) thread_->join();
  }
}

bool InternalThread::has_failed() const {
  boost::mutex::scoped_lock lock(failure_mutex_);
  return static_cast<bool>(failure_);
}

std::string InternalThread::failure_message() const {
  boost::mutex::scoped_lock lock(failure_mutex_);
  return failure_message_;
}

void InternalThread::RethrowIfFailed() const {
  std::exception_ptr failure;
  {
    boost::mutex::scoped_lock lock(failure_mutex_);
    failure = failure_;
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace crema
