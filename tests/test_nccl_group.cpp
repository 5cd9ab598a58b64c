// NcclGroup (pycaffe's caffe.NCCL): builds without NCCL refuse it with the
// reason; builds with NCCL refuse CPU mode, a uid of the wrong size and a
// rank outside the count; on a device, a group of one process trains as the
// solver does alone (the average over one is the gradient itself).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "crema/nccl_group.hpp"
#include "crema/sgd_solvers.hpp"
#include "linear_solver.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

std::shared_ptr<Solver<double>> LinearSgd() {
  std::shared_ptr<Solver<double>> solver(CreateSolver<double>(LinearSolver("SGD")));
  SetInputs(solver->net().get());
  return solver;
}

TEST(NcclGroupTest, WithoutNcclEveryEntryIsRefusedWithTheReason) {
  if (NcclGroup<double>::Available()) GTEST_SKIP() << "this build has NCCL";
  EXPECT_NE(ErrorMessageOf([] { NcclGroup<double>::NewUid(); }).find("built without NCCL"),
            std::string::npos);
  const std::string joining =
      ErrorMessageOf([] { NcclGroup<double> group(LinearSgd(), std::string(128, '\0')); });
  EXPECT_NE(joining.find("built without NCCL"), std::string::npos) << joining;
  EXPECT_NE(joining.find("--gpu=0,1"), std::string::npos) << joining;
}

TEST(NcclGroupTest, JoiningNeedsGpuMode) {
  if (!NcclGroup<double>::Available()) GTEST_SKIP() << "this build has no NCCL";
  Context::set_mode(Context::CPU);
  const std::string message =
      ErrorMessageOf([] { NcclGroup<double> group(LinearSgd(), std::string(128, '\0')); });
  EXPECT_NE(message.find("set GPU mode"), std::string::npos) << message;
}

class NcclGroupGpuTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (!NcclGroup<double>::Available()) GTEST_SKIP() << "this CUDA build has no NCCL";
  }
  void TearDown() override {
    Context::set_solver_count(1);
    Context::set_solver_rank(0);
    GpuTest::TearDown();
  }
};

TEST_F(NcclGroupGpuTest, BadIdsAndRanksAreRefused) {
  EXPECT_NE(ErrorMessageOf([] { NcclGroup<double> group(LinearSgd(), "short"); })
                .find("5 bytes, expected the 128"),
            std::string::npos);
  Context::set_solver_rank(1);  // of a count of 1
  EXPECT_NE(ErrorMessageOf([] {
              NcclGroup<double> group(LinearSgd(), NcclGroup<double>::NewUid());
            }).find("solver rank 1 is outside [0, solver count 1)"),
            std::string::npos);
}

TEST_F(NcclGroupGpuTest, AGroupOfOneTrainsAsTheSolverAlone) {
  const std::string uid = NcclGroup<double>::NewUid();
  ASSERT_EQ(uid.size(), 128u);
  EXPECT_NE(NcclGroup<double>::NewUid(), uid);
  auto alone = LinearSgd();
  alone->Step(3);
  auto grouped = LinearSgd();
  {
    NcclGroup<double> group(grouped, uid);
    group.Broadcast();
    group.AttachToSolver();
    group.AttachToSolver();  // once: a second call changes nothing
  }  // the solver's callback keeps the communicator
  grouped->Step(3);
  EXPECT_EQ(LinearWeights(*grouped), LinearWeights(*alone));
  EXPECT_NE(LinearWeights(*alone), std::vector<double>({0.5, 0.5}));  // it trained
}

}  // namespace
}  // namespace crema
