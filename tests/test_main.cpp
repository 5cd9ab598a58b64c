// The test binary's entry: logging set up once, and every test starts on a
// thread in CPU mode with the same seed, so results never depend on order.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "crema/common.hpp"

namespace crema {
std::string CompatDir() {
  const char* dir = std::getenv("CREMA_COMPAT_DIR");
  return dir && *dir ? std::string(dir) : std::string(CREMA_SHARED_DIR) + "/compat";
}
bool HaveCompatDir() {
  struct stat info;
  return stat(CompatDir().c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}
bool RunningInCi() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}
std::string SourceDir() { return CREMA_SOURCE_DIR; }
}  // namespace crema

namespace {
class ResetContext : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override {
    crema::Context::set_mode(crema::Context::CPU);
    crema::Context::set_random_seed(1701);
  }
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  ::testing::UnitTest::GetInstance()->listeners().Append(new ResetContext);
  return RUN_ALL_TESTS();
}
