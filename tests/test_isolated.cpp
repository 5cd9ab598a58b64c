// RunIsolated: a reader run in a child process gives back its result, its
// Error, or an Error saying how it died, and this process goes on.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "crema/common.hpp"
#include "crema/util/isolated.hpp"

namespace crema {
namespace {

std::string ErrorOf(const std::function<std::string()>& work) {
  try {
    RunIsolated("model.h5", 10, work);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(IsolatedTest, ReturnsTheChildsBytes) {
  // Zero bytes and a result larger than a pipe's buffer come back whole.
  std::string big(1 << 20, 'x');
  big[17] = '\0';
  EXPECT_EQ(RunIsolated("model.h5", 10, [&]() { return big; }), big);
  EXPECT_EQ(RunIsolated("model.h5", 10, []() { return std::string(); }), "");
}

TEST(IsolatedTest, AnErrorInTheChildIsTheSameErrorHere) {
  EXPECT_EQ(ErrorOf([]() -> std::string { throw Error("model.h5: no group 'data'"); }),
            "model.h5: no group 'data'");
}

TEST(IsolatedTest, ACrashInTheChildIsAnErrorNamingTheFile) {
  const std::string message = ErrorOf([]() -> std::string {
    // SIGKILL: a sanitizer cannot turn it into an exit status.
    std::raise(SIGKILL);
    return "not reached";
  });
  EXPECT_NE(message.find("model.h5: the reader crashed on this file (signal 9"), std::string::npos)
      << message;
  // This process and its memory are untouched: it can run another reader.
  EXPECT_EQ(RunIsolated("model.h5", 10, []() { return std::string("again"); }), "again");
}

TEST(IsolatedTest, AChildThatExitsWithoutAResultIsAnError) {
  const std::string message = ErrorOf([]() -> std::string { std::_Exit(3); });
  EXPECT_NE(message.find("model.h5: the reader failed on this file (exit status 3)"),
            std::string::npos)
      << message;
}

// A reader that loops (as libhdf5 does on some corrupt files) is stopped at
// its CPU-time bound.
TEST(IsolatedTest, AChildPastItsCpuTimeIsStopped) {
  std::string message;
  try {
    RunIsolated("model.h5", 1, []() -> std::string {
      volatile unsigned spin = 0;
      for (;;) spin = spin + 1;
    });
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("model.h5: the reader was stopped after 1 s of CPU time on this file"),
            std::string::npos)
      << message;
}

TEST(IsolatedTest, TheChildsWritesStayInTheChild) {
  int value = 1;
  RunIsolated("model.h5", 10, [&]() {
    value = 2;
    return std::string();
  });
  EXPECT_EQ(value, 1);
}

}  // namespace
}  // namespace crema
