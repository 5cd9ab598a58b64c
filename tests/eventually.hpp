// Waiting in a test for what another thread does: the test waits for the
// event itself, never for a fixed time, so the machine's speed cannot decide
// the verdict. A wait that runs out (a minute: a hang on any machine) fails
// the test and names what it waited for.
#ifndef CREMA_TESTS_EVENTUALLY_HPP_
#define CREMA_TESTS_EVENTUALLY_HPP_

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace crema {

// ASSERT_TRUE(Eventually([&] { return worker.waiting.load(); }, "the worker to wait"));
template <typename Condition>
::testing::AssertionResult Eventually(Condition condition, const std::string& what) {
  constexpr int kLimitSeconds = 60;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kLimitSeconds);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return ::testing::AssertionFailure() << "waited " << kLimitSeconds << " s for " << what;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return ::testing::AssertionSuccess();
}

}  // namespace crema

#endif  // CREMA_TESTS_EVENTUALLY_HPP_
