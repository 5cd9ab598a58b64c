// The SGD family's device bodies: each rule, weight decay (coupled and
// decoupled), gradient clipping, iter_size and the weights' moving average
// trained in GPU mode agree with the same training in CPU mode (same net,
// same seed), and a GPU-mode step leaves parameters, gradients and history
// on the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

#ifdef CREMA_CUDA

// Two inner products around a TanH, fitted by Euclidean loss: weights and
// biases, a nonlinearity, and a bias with its own lr_mult and no decay, so
// params_lr and params_weight_decay reach the update.
const char* kTinyNet =
    "name: 'tiny'"
    "layer { name: 'input' type: 'Input' top: 'x' top: 'y'"
    "  input_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 2 } } }"
    "layer { name: 'fc1' type: 'InnerProduct' bottom: 'x' top: 'h'"
    "  inner_product_param { num_output: 5"
    "    weight_filler { type: 'gaussian' std: 0.5 }"
    "    bias_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'tanh' type: 'TanH' bottom: 'h' top: 'h' }"
    "layer { name: 'fc2' type: 'InnerProduct' bottom: 'h' top: 'p'"
    "  param { lr_mult: 1 } param { lr_mult: 2 decay_mult: 0 }"
    "  inner_product_param { num_output: 2"
    "    weight_filler { type: 'gaussian' std: 0.5 }"
    "    bias_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'loss' type: 'EuclideanLoss' bottom: 'p' bottom: 'y' top: 'loss' }";

// The fillers draw on the host from random_seed, so both modes start from
// the same weights.
SolverParameter TinySolver(const std::string& type, const std::string& extra) {
  SolverParameter param;
  ReadProtoFromString(std::string("base_lr: 0.05 lr_policy: 'fixed' max_iter: 10 display: 0 ") +
                          "random_seed: 1701 snapshot_after_train: false type: '" + type + "' " +
                          extra,
                      "solver", &param);
  ReadProtoFromString(kTinyNet, "net", param.mutable_net_param());
  return param;
}

// Fixed inputs and targets, written on the host as a data layer would.
template <typename Dtype>
void SetTinyInputs(Net<Dtype>* net) {
  Blob<Dtype>* x = net->blob_by_name("x").get();
  Blob<Dtype>* y = net->blob_by_name("y").get();
  for (int i = 0; i < x->count(); ++i) x->mutable_cpu_data()[i] = Dtype(std::sin(i + 1.0));
  for (int i = 0; i < y->count(); ++i) y->mutable_cpu_data()[i] = Dtype(std::cos(3.0 * i));
}

template <typename Dtype>
std::vector<Blob<Dtype>*> SolverHistory(const Solver<Dtype>& solver) {
  std::vector<Blob<Dtype>*> blobs;
  for (const auto& blob : dynamic_cast<const SGDSolver<Dtype>&>(solver).history()) {
    blobs.push_back(blob.get());
  }
  return blobs;
}

template <typename Dtype>
Dtype MaxAbs(const Dtype* x, int n) {
  Dtype largest = 0;
  for (int i = 0; i < n; ++i) largest = std::max(largest, std::abs(x[i]));
  return largest;
}

// Every value a snapshot's layers hold, in order (float or double storage).
std::vector<double> SnapshotValues(const NetParameter& net) {
  std::vector<double> values;
  for (const LayerParameter& layer : net.layer()) {
    for (const BlobProto& blob : layer.blobs()) {
      values.insert(values.end(), blob.data().begin(), blob.data().end());
      values.insert(values.end(), blob.double_data().begin(), blob.double_data().end());
    }
  }
  return values;
}

template <typename Dtype>
class SgdSolversGpuTest : public ::testing::Test {
 protected:
  static constexpr int kSteps = 4;

  void SetUp() override { CREMA_SKIP_WITHOUT_GPU(); }
  void TearDown() override { Context::set_mode(Context::CPU); }

  std::unique_ptr<Solver<Dtype>> Train(const SolverParameter& param, Context::Mode mode) {
    Context::set_mode(mode);
    auto solver = CreateSolver<Dtype>(param);
    SetTinyInputs(solver->net().get());
    solver->Step(kSteps);
    return solver;
  }

  // Rounding differs between the modes (cuBLAS sums in another order, the
  // kernels fuse multiply-adds), so each value is compared relative to the
  // largest of its blob: entries that cancel to near zero are not held to a
  // relative bound their inputs' rounding cannot meet.
  static void ExpectBlobsNear(const std::vector<Blob<Dtype>*>& expected,
                              const std::vector<Blob<Dtype>*>& actual, const std::string& what) {
    const Dtype tolerance = sizeof(Dtype) == sizeof(float) ? Dtype(1e-5) : Dtype(1e-10);
    ASSERT_EQ(expected.size(), actual.size()) << what;
    for (size_t b = 0; b < expected.size(); ++b) {
      ASSERT_EQ(expected[b]->count(), actual[b]->count()) << what << " blob " << b;
      const Dtype* want = expected[b]->cpu_data();
      const Dtype* got = actual[b]->cpu_data();
      const int n = expected[b]->count();
      const Dtype scale = MaxAbs(want, n);
      for (int i = 0; i < n; ++i) {
        ASSERT_NEAR(want[i], got[i], tolerance * scale) << what << " blob " << b << " at " << i;
      }
    }
  }

  // The same training in both modes ends with the same weights and history.
  void ExpectGpuMatchesCpu(const SolverParameter& param) {
    auto cpu = Train(param, Context::CPU);
    auto gpu = Train(param, Context::GPU);
    // Otherwise the comparison below would hold for a rule that never ran.
    for (Blob<Dtype>* blob : SolverHistory(*cpu)) ASSERT_GT(blob->asum_data(), Dtype(0));
    ExpectBlobsNear(cpu->net()->learnable_params(), gpu->net()->learnable_params(), "weights");
    ExpectBlobsNear(SolverHistory(*cpu), SolverHistory(*gpu), "history");
  }
};

TYPED_TEST_SUITE(SgdSolversGpuTest, TestDtypes);

TYPED_TEST(SgdSolversGpuTest, SGD) {
  this->ExpectGpuMatchesCpu(TinySolver("SGD", "momentum: 0.9"));
}

TYPED_TEST(SgdSolversGpuTest, Nesterov) {
  this->ExpectGpuMatchesCpu(TinySolver("Nesterov", "momentum: 0.9"));
}

TYPED_TEST(SgdSolversGpuTest, AdaGrad) {
  this->ExpectGpuMatchesCpu(TinySolver("AdaGrad", "delta: 1e-8"));
}

TYPED_TEST(SgdSolversGpuTest, RMSProp) {
  this->ExpectGpuMatchesCpu(TinySolver("RMSProp", "rms_decay: 0.98 delta: 1e-8"));
}

TYPED_TEST(SgdSolversGpuTest, AdaDelta) {
  SolverParameter param = TinySolver("AdaDelta", "momentum: 0.95 delta: 1e-6");
  param.set_base_lr(1);  // its steps are about sqrt(delta): let them move the weights
  this->ExpectGpuMatchesCpu(param);
}

TYPED_TEST(SgdSolversGpuTest, Adam) {
  this->ExpectGpuMatchesCpu(TinySolver("Adam", "momentum: 0.9 momentum2: 0.999 delta: 1e-8"));
}

TYPED_TEST(SgdSolversGpuTest, L1WeightDecay) {
  this->ExpectGpuMatchesCpu(
      TinySolver("SGD", "momentum: 0.9 weight_decay: 0.05 regularization_type: 'L1'"));
}

TYPED_TEST(SgdSolversGpuTest, L2WeightDecay) {
  this->ExpectGpuMatchesCpu(
      TinySolver("SGD", "momentum: 0.9 weight_decay: 0.05 regularization_type: 'L2'"));
}

TYPED_TEST(SgdSolversGpuTest, SGDWDecoupledDecay) {
  this->ExpectGpuMatchesCpu(TinySolver("SGDW", "momentum: 0.9 weight_decay: 0.05"));
}

TYPED_TEST(SgdSolversGpuTest, AdamWDecoupledDecay) {
  this->ExpectGpuMatchesCpu(
      TinySolver("AdamW", "momentum: 0.9 momentum2: 0.999 delta: 1e-8 weight_decay: 0.05"));
}

// ema_decay: the average a GPU-mode run keeps (and snapshots) is the one a
// CPU-mode run keeps.
TYPED_TEST(SgdSolversGpuTest, EmaAverageMatchesCpu) {
  using Dtype = TypeParam;
  char pattern[] = "/tmp/crema_ema_gpu_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::vector<std::vector<double>> averages;
  for (const Context::Mode mode : {Context::CPU, Context::GPU}) {
    const std::string prefix = dir + (mode == Context::CPU ? "/cpu" : "/gpu");
    auto solver = this->Train(
        TinySolver("SGDW", "momentum: 0.9 weight_decay: 0.05 ema_decay: 0.7 snapshot_prefix: '" +
                               prefix + "'"),
        mode);
    solver->Snapshot();
    NetParameter average;
    ReadProtoFromBinaryFile(prefix + "_iter_" + std::to_string(this->kSteps) + ".ema.caffemodel",
                            &average);
    averages.push_back(SnapshotValues(average));
  }
  std::system(("rm -rf " + dir).c_str());
  ASSERT_EQ(averages[0].size(), averages[1].size());
  ASSERT_FALSE(averages[0].empty());
  const double tolerance = sizeof(Dtype) == sizeof(float) ? 1e-5 : 1e-10;
  double scale = 0;
  for (double v : averages[0]) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < averages[0].size(); ++i) {
    EXPECT_NEAR(averages[0][i], averages[1][i], tolerance * scale) << "value " << i;
  }
}

// A bound far below the gradients' norm, so every step is clipped.
TYPED_TEST(SgdSolversGpuTest, ClipGradients) {
  this->ExpectGpuMatchesCpu(TinySolver("SGD", "momentum: 0.9 clip_gradients: 0.01"));
}

TYPED_TEST(SgdSolversGpuTest, IterSize2) {
  this->ExpectGpuMatchesCpu(TinySolver("Adam", "momentum: 0.9 momentum2: 0.999 iter_size: 2"));
}

// A GPU-mode step must not route the update through host memory: had any
// part of it read or written the host copy, a head would be HEAD_AT_CPU or
// SYNCED. Every step of the pipeline runs (decay, clipping, iter_size).
TYPED_TEST(SgdSolversGpuTest, StepKeepsParametersGradientsAndHistoryOnTheDevice) {
  using Dtype = TypeParam;
  for (const std::string type : {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"}) {
    for (const std::string decay : {"L1", "L2"}) {
      SCOPED_TRACE(type + ", " + decay);
      const std::string momentum = type == "AdaGrad" || type == "RMSProp" ? "" : "momentum: 0.9 ";
      const std::string pipeline = "weight_decay: 0.05 regularization_type: '" + decay +
                                   "' clip_gradients: 0.01 iter_size: 2";
      auto solver = this->Train(TinySolver(type, momentum + pipeline), Context::GPU);
      for (Blob<Dtype>* param : solver->net()->learnable_params()) {
        EXPECT_EQ(param->data()->head(), SyncedMemory::HEAD_AT_GPU);
        EXPECT_EQ(param->diff()->head(), SyncedMemory::HEAD_AT_GPU);
      }
      for (Blob<Dtype>* history : SolverHistory(*solver)) {
        EXPECT_EQ(history->data()->head(), SyncedMemory::HEAD_AT_GPU);
      }
    }
  }
  // The decoupled solvers, and the moving average updated after each step.
  for (const std::string type : {"SGDW", "AdamW"}) {
    SCOPED_TRACE(type + " with ema_decay");
    auto solver = this->Train(
        TinySolver(type, "momentum: 0.9 weight_decay: 0.05 clip_gradients: 0.01 ema_decay: 0.9"),
        Context::GPU);
    for (Blob<Dtype>* param : solver->net()->learnable_params()) {
      EXPECT_EQ(param->data()->head(), SyncedMemory::HEAD_AT_GPU);
      EXPECT_EQ(param->diff()->head(), SyncedMemory::HEAD_AT_GPU);
    }
  }
}

#endif  // CREMA_CUDA

}  // namespace
}  // namespace crema
