// Context is per thread: what one thread sets never shows in another, and a
// worker started by InternalThread inherits its parent's placement.
#include <gtest/gtest.h>

#include <boost/thread.hpp>
#include <set>
#include <vector>

#include "crema/common.hpp"
#include "crema/internal_thread.hpp"
#include "crema/util/math_functions.hpp"

namespace crema {
namespace {

std::vector<uint32_t> Draw(int n) {
  std::vector<uint32_t> values(n);
  for (auto& v : values) v = Context::rng()();
  return values;
}

TEST(ContextTest, EachThreadHasItsOwnInstance) {
  Context* main_context = &Context::Get();
  Context* other_context = nullptr;
  boost::thread other([&] { other_context = &Context::Get(); });
  other.join();
  EXPECT_NE(main_context, other_context);
  EXPECT_EQ(main_context, &Context::Get());
}

TEST(ContextTest, ValuesSetInOneThreadDoNotLeak) {
  Context::set_solver_count(4);
  Context::set_solver_rank(3);
  Context::set_multiprocess(true);
  int seen_count = -1, seen_rank = -1;
  bool seen_root = false, seen_multiprocess = true;
  boost::thread other([&] {
    seen_count = Context::solver_count();
    seen_rank = Context::solver_rank();
    seen_root = Context::is_rank_zero();
    seen_multiprocess = Context::multiprocess();
    Context::set_solver_count(9);  // must not reach the main thread
  });
  other.join();
  EXPECT_EQ(seen_count, 1);
  EXPECT_EQ(seen_rank, 0);
  EXPECT_TRUE(seen_root);
  EXPECT_FALSE(seen_multiprocess);
  EXPECT_EQ(Context::solver_count(), 4);
  EXPECT_EQ(Context::solver_rank(), 3);
  Context::set_solver_count(1);
  Context::set_solver_rank(0);
  Context::set_multiprocess(false);
}

TEST(ContextTest, DefaultsAreCpuModeRankZero) {
  Context::Mode mode = Context::GPU;
  bool root = false;
  boost::thread other([&] {
    mode = Context::mode();
    root = Context::is_rank_zero();
  });
  other.join();
  EXPECT_EQ(mode, Context::CPU);
  EXPECT_TRUE(root);
}

TEST(ContextTest, SeedingMakesStreamReproducible) {
  Context::set_random_seed(42);
  const std::vector<uint32_t> first = Draw(16);
  Context::set_random_seed(42);
  EXPECT_EQ(Draw(16), first);
  Context::set_random_seed(43);
  EXPECT_NE(Draw(16), first);
}

TEST(ContextTest, SeedsDifferingInTheHighHalfGiveDifferentStreams) {
  // Child threads draw 64-bit seeds: both halves must count.
  const uint64_t low = 12345;
  Context::set_random_seed(low);
  const std::vector<uint32_t> first = Draw(8);
  Context::set_random_seed(low | (uint64_t{1} << 40));
  const std::vector<uint32_t> second = Draw(8);
  EXPECT_NE(first, second);
  Context::set_random_seed(low | (uint64_t{1} << 40));
  EXPECT_EQ(Draw(8), second);
}

TEST(ContextTest, A32BitSeedGivesTheTwistersOwnStream) {
  // A random_seed from a prototxt seeds the twister directly, as Caffe does.
  Context::set_random_seed(1701);
  boost::mt19937 twister(1701u);
  for (uint32_t value : Draw(8)) EXPECT_EQ(value, twister());
}

TEST(ContextTest, SeedingReproducesDistributions) {
  std::vector<float> a(100), b(100);
  Context::set_random_seed(7);
  rng_gaussian<float>(100, 0.f, 1.f, a.data());
  Context::set_random_seed(7);
  rng_gaussian<float>(100, 0.f, 1.f, b.data());
  EXPECT_EQ(a, b);
}

TEST(ContextTest, ThreadsHaveDifferentStreams) {
  std::vector<uint32_t> first, second;
  boost::thread t1([&] { first = Draw(8); });
  boost::thread t2([&] { second = Draw(8); });
  t1.join();
  t2.join();
  EXPECT_NE(first, second);
}

TEST(ContextTest, SeedInOneThreadDoesNotReseedAnother) {
  Context::set_random_seed(5);
  const std::vector<uint32_t> expected = Draw(4);
  Context::set_random_seed(5);
  boost::thread other([] { Context::set_random_seed(5); Draw(100); });
  other.join();
  EXPECT_EQ(Draw(4), expected);
}

TEST(ContextTest, RngStateRoundTrips) {
  Context::set_random_seed(11);
  Draw(3);
  const std::string state = Context::rng().State();
  const std::vector<uint32_t> expected = Draw(5);
  Context::rng().SetState(state);
  EXPECT_EQ(Draw(5), expected);
  EXPECT_THROW(Context::rng().SetState("not a state"), Error);
}

// Records the child's view of its Context.
class ContextProbe : public InternalThread {
 public:
  ~ContextProbe() override { StopInternalThread(); }
  Context::Mode mode = Context::GPU;
  int device = -1, solver_count = -1, solver_rank = -1;
  bool rank_zero = true;
  uint64_t seed = 0;
  std::vector<uint32_t> draws;

 protected:
  void InternalThreadEntry() override {
    mode = Context::mode();
    device = Context::device();
    solver_count = Context::solver_count();
    solver_rank = Context::solver_rank();
    rank_zero = Context::is_rank_zero();
    seed = Context::random_seed();
    draws = Draw(4);
  }
};

TEST(ContextTest, ChildThreadInheritsPlacement) {
  Context::set_solver_count(3);
  Context::set_solver_rank(2);
  ContextProbe probe;
  probe.StartInternalThread();
  probe.StopInternalThread();
  EXPECT_EQ(probe.mode, Context::CPU);
  EXPECT_EQ(probe.device, Context::device());
  EXPECT_EQ(probe.solver_count, 3);
  EXPECT_EQ(probe.solver_rank, 2);
  EXPECT_FALSE(probe.rank_zero);
  Context::set_solver_count(1);
  Context::set_solver_rank(0);
}

TEST(ContextTest, EachChildGetsADifferentSeedReproducibly) {
  Context::set_random_seed(99);
  ContextProbe a, b;
  a.StartInternalThread();
  a.StopInternalThread();
  b.StartInternalThread();
  b.StopInternalThread();
  EXPECT_NE(a.seed, b.seed);
  EXPECT_NE(a.draws, b.draws);
  // The same parent seed gives the same children.
  Context::set_random_seed(99);
  ContextProbe again;
  again.StartInternalThread();
  again.StopInternalThread();
  EXPECT_EQ(again.seed, a.seed);
  EXPECT_EQ(again.draws, a.draws);
}

TEST(ContextTest, GpuModeWithoutDeviceIsAUserError) {
  if (Context::DeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present: nothing to refuse";
  EXPECT_THROW(Context::set_mode(Context::GPU), Error);
  EXPECT_EQ(Context::mode(), Context::CPU);
  EXPECT_EQ(Context::FindDevice(0), -1);
  EXPECT_FALSE(Context::CheckDevice(0));
}

}  // namespace
}  // namespace crema
