// What every suite shares: the element-type and device lists that typed
// tests run over, a fixture that puts the test thread in the right mode, and
// a net parsed from text.
#ifndef CREMA_TESTS_TEST_COMMON_HPP_
#define CREMA_TESTS_TEST_COMMON_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "crema/common.hpp"
#include "crema/filler.hpp"
#include "crema/net.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/io.hpp"
#include "crema/util/thread_pool.hpp"

namespace crema {

// The folder of BVLC reference files: $CREMA_COMPAT_DIR, else ../shared/compat
// beside the checkout. Defined in test_main.cpp, the one file that knows the
// checkout's path, so the other test files compile the same wherever the
// checkout is (ccache).
std::string CompatDir();
// Whether CompatDir() is there. A clone alone has no such folder: the tests
// that read it skip (CREMA_REQUIRE_COMPAT), except under CI=true, where its
// absence fails them.
bool HaveCompatDir();
bool RunningInCi();

#define CREMA_REQUIRE_COMPAT()                                                                 \
  do {                                                                                         \
    if (!::crema::HaveCompatDir()) {                                                           \
      if (::crema::RunningInCi()) {                                                            \
        FAIL() << "the BVLC reference files are missing at " << ::crema::CompatDir()           \
               << " (CI=true: they must be there)";                                            \
      }                                                                                        \
      GTEST_SKIP() << "no BVLC reference files at " << ::crema::CompatDir()                    \
                   << " (../shared/compat beside the checkout, or CREMA_COMPAT_DIR): skipped"; \
    }                                                                                          \
  } while (0)
// The checkout itself (for its test inputs, e.g. tests/fuzz/regressions).
std::string SourceDir();

template <typename T>
struct CPUDevice {
  using Dtype = T;
  static constexpr Context::Mode device = Context::CPU;
};

template <typename T>
struct GPUDevice {
  using Dtype = T;
  static constexpr Context::Mode device = Context::GPU;
};

using TestDtypes = ::testing::Types<float, double>;

#ifndef CREMA_CUDA
using TestDtypesAndDevices = ::testing::Types<CPUDevice<float>, CPUDevice<double>>;
#else
using TestDtypesAndDevices =
    ::testing::Types<CPUDevice<float>, CPUDevice<double>, GPUDevice<float>, GPUDevice<double>>;
#endif

// True (and the test is skipped with the reason) when a GPU test has no device.
#define CREMA_SKIP_WITHOUT_GPU()                                          \
  do {                                                                    \
    if (::crema::Context::DeviceCount() == 0) {                           \
      GTEST_SKIP() << "no CUDA device on this machine: GPU test skipped"; \
    }                                                                     \
  } while (0)

// Typed over TestDtypesAndDevices: runs the test thread in the device's mode,
// and skips GPU instances on machines without a CUDA device.
template <typename TypeParam>
class MultiDeviceTest : public ::testing::Test {
 protected:
  using Dtype = typename TypeParam::Dtype;
  void SetUp() override {
    if (TypeParam::device == Context::GPU) CREMA_SKIP_WITHOUT_GPU();
    Context::set_mode(TypeParam::device);
  }
  void TearDown() override { Context::set_mode(Context::CPU); }
};

// A GPU-only fixture for untyped tests.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CREMA_SKIP_WITHOUT_GPU();
    Context::set_mode(Context::GPU);
  }
  void TearDown() override { Context::set_mode(Context::CPU); }
};

// Sets the thread budget for a scope (the CPU kernels split their work by
// it) and restores the previous one, also when an assertion ends the test.
class ScopedThreadBudget {
 public:
  explicit ScopedThreadBudget(int budget) : saved_(ThreadBudget()) { SetThreadBudget(budget); }
  ~ScopedThreadBudget() { SetThreadBudget(saved_); }

 private:
  const int saved_;
};

// The NetParameter that text (prototxt) describes.
inline NetParameter ParseNet(const std::string& text) {
  NetParameter param;
  ReadProtoFromString(text, "test net", &param);
  return param;
}

// Twin nets for a comparison: `second` gets `first`'s weights, and both the
// same Gaussian values in their blob "data".
template <typename Dtype>
void ShareWeightsAndInput(Net<Dtype>* first, Net<Dtype>* second) {
  NetParameter weights;
  first->ToProto(&weights);
  second->CopyTrainedLayersFrom(weights);
  FillerParameter gaussian;
  gaussian.set_type("gaussian");
  GetFiller<Dtype>(gaussian)->Fill(first->blob_by_name("data").get());
  second->blob_by_name("data")->CopyFrom(*first->blob_by_name("data"));
}

// ShareWeightsAndInput, then labels 1 and 2 in both nets' blob "label" and
// their parameter gradients zeroed.
template <typename Dtype>
void MakeTwins(Net<Dtype>* first, Net<Dtype>* second) {
  ShareWeightsAndInput(first, second);
  for (Net<Dtype>* net : {first, second}) {
    Dtype* label = net->blob_by_name("label")->mutable_cpu_data();
    label[0] = 1;
    label[1] = 2;
    net->ClearParamDiffs();
  }
}

// The position of the layer called `name` in `net` (the layer count where
// none is).
template <typename Dtype>
int LayerIndex(const Net<Dtype>& net, const std::string& name) {
  const auto& names = net.layer_names();
  return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
}

}  // namespace crema

#endif  // CREMA_TESTS_TEST_COMMON_HPP_
