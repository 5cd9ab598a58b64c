// Turnstile: lets the threads of a fixed group, numbered 0..parties-1, through
// one at a time in number order, round after round. Data-parallel training
// puts one in front of a layer shared by the solver threads, so the solvers
// take its batches in rank order and a run is reproducible.
#ifndef CREMA_UTIL_TURNSTILE_HPP_
#define CREMA_UTIL_TURNSTILE_HPP_

#include <boost/thread/condition_variable.hpp>
#include <boost/thread/mutex.hpp>

#include "crema/common.hpp"

namespace crema {

class Turnstile {
 public:
  explicit Turnstile(int parties) : parties_(parties) {}

  // Blocks until it is `index`'s turn. On a boost thread the wait is an
  // interruption point, so stopping a solver worker never hangs here.
  void Enter(int index) {
    boost::unique_lock<boost::mutex> lock(mutex_);
    while (next_ != index) turn_.wait(lock);
  }
  // Passes the turn to the next index.
  void Leave() {
    {
      boost::lock_guard<boost::mutex> lock(mutex_);
      next_ = (next_ + 1) % parties_;
    }
    turn_.notify_all();
  }
  int parties() const { return parties_; }

 private:
  const int parties_;
  int next_ = 0;
  boost::mutex mutex_;
  boost::condition_variable turn_;
  DISABLE_COPY_AND_ASSIGN(Turnstile);
};

// Enters on construction, leaves on destruction (also when Forward throws).
class TurnstileGuard {
 public:
  TurnstileGuard(Turnstile* turnstile, int index) : turnstile_(turnstile) {
    if (turnstile_) turnstile_->Enter(index);
  }
  ~TurnstileGuard() {
    if (turnstile_) turnstile_->Leave();
  }

 private:
  Turnstile* turnstile_;
  DISABLE_COPY_AND_ASSIGN(TurnstileGuard);
};

}  // namespace crema

#endif  // CREMA_UTIL_TURNSTILE_HPP_
