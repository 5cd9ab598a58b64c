// Data-parallel training on the CPU: N solver threads at batch B train the
// same weights as one solver at batch N*B reading the same records; runs are
// reproducible; shareable layers are one instance passed through in turn; a
// failing solver or a stop request ends every solver without a hang.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/thread.hpp>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "crema/data/data_layer.hpp"
#include "crema/data/dummy_data_layer.hpp"
#include "crema/parallel.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {

// A DummyData layer that records how many threads are inside its Forward at
// once, and can be told to fail in one solver.
template <typename Dtype>
class ConcurrencyProbeLayer : public DummyDataLayer<Dtype> {
 public:
  explicit ConcurrencyProbeLayer(const LayerParameter& param) : DummyDataLayer<Dtype>(param) {}
  const char* type() const override { return "ConcurrencyProbe"; }

  static std::atomic<int> inside, most_inside, forwards, fail_rank;

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override {
    const int now = ++inside;
    int most = most_inside.load();
    while (now > most && !most_inside.compare_exchange_weak(most, now)) {
    }
    boost::this_thread::sleep_for(boost::chrono::microseconds(200));  // widen the window
    ++forwards;
    --inside;
    CREMA_REQUIRE(Context::solver_rank() != fail_rank.load() || forwards < 10,
                  "probe: solver " << Context::solver_rank() << " fails on purpose");
    DummyDataLayer<Dtype>::Forward_cpu(bottom, top);
  }
};
template <typename Dtype> std::atomic<int> ConcurrencyProbeLayer<Dtype>::inside{0};
template <typename Dtype> std::atomic<int> ConcurrencyProbeLayer<Dtype>::most_inside{0};
template <typename Dtype> std::atomic<int> ConcurrencyProbeLayer<Dtype>::forwards{0};
template <typename Dtype> std::atomic<int> ConcurrencyProbeLayer<Dtype>::fail_rank{-1};
REGISTER_LAYER_CLASS(ConcurrencyProbe);

namespace {

using Probe = ConcurrencyProbeLayer<float>;
using Weights = std::vector<std::vector<float>>;

class ParallelTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // 96 1x8x8 records: 50 iterations of 8 records wrap the database often.
    WriteDatumLMDB(
        dir_ + "/train", 96, 8, 8, [](int i, int p) { return (i * 29 + p * (i % 5 + 3)) % 256; },
        [](int i) { return i % 4; });
    Probe::inside = 0;
    Probe::most_inside = 0;
    Probe::forwards = 0;
    Probe::fail_rank = -1;
  }
  // LeNet's layer kinds at a small size: conv, max-pool, inner product, ReLU,
  // inner product, softmax loss; SGD with momentum, weight decay, inv policy.
  SolverParameter LeNetLike(int batch, int max_iter = 50) const {
    const std::string net =
        "name: 'small_lenet'"
        "layer { name: 'data' type: 'Data' top: 'data' top: 'label'"
        "  transform_param { scale: 0.00390625 }"
        "  data_param { source: '" + dir_ + "/train' batch_size: " + std::to_string(batch) +
        "    backend: LMDB } }"
        "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
        "  param { lr_mult: 1 } param { lr_mult: 2 }"
        "  convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: 'xavier' } } }"
        "layer { name: 'pool' type: 'Pooling' bottom: 'conv' top: 'pool'"
        "  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }"
        "layer { name: 'ip1' type: 'InnerProduct' bottom: 'pool' top: 'ip1'"
        "  inner_product_param { num_output: 10 weight_filler { type: 'xavier' } } }"
        "layer { name: 'relu' type: 'ReLU' bottom: 'ip1' top: 'ip1' }"
        "layer { name: 'ip2' type: 'InnerProduct' bottom: 'ip1' top: 'ip2'"
        "  inner_product_param { num_output: 4 weight_filler { type: 'xavier' } } }"
        "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip2' bottom: 'label' top: 'loss' }";
    SolverParameter param;
    ReadProtoFromString("base_lr: 0.05 momentum: 0.9 weight_decay: 0.0005 lr_policy: 'inv' "
                        "gamma: 0.0001 power: 0.75 display: 0 random_seed: 11 "
                        "snapshot_after_train: false max_iter: " + std::to_string(max_iter) +
                            " snapshot_prefix: '" + dir_ + "/snap'",
                        "solver", &param);
    ReadProtoFromString(net, "net", param.mutable_net_param());
    return param;
  }

  static Weights WeightsOf(const Solver<float>& solver) {
    Weights weights;
    for (const Blob<float>* blob : solver.net()->learnable_params()) {
      weights.emplace_back(blob->cpu_data(), blob->cpu_data() + blob->count());
    }
    return weights;
  }

  static Weights TrainOne(const SolverParameter& param) {
    auto solver = CreateSolver<float>(param);
    solver->Solve();
    return WeightsOf(*solver);
  }

  static Weights TrainParallel(const SolverParameter& param, int solvers) {
    ParallelTrainer<float> trainer(param, solvers);
    trainer.Run();
    const Weights root = WeightsOf(*trainer.main_solver());
    for (Solver<float>* worker : trainer.worker_solvers()) {
      EXPECT_EQ(WeightsOf(*worker), root) << "a worker's weights left the root's";
    }
    EXPECT_EQ(trainer.main_solver()->iter(), param.max_iter());
    return root;
  }

  // Largest difference relative to the largest magnitude, per blob.
  static double RelativeDifference(const Weights& a, const Weights& b) {
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      double scale = 1e-20, diff = 0;
      for (size_t j = 0; j < a[i].size(); ++j) {
        scale = std::max(scale, std::fabs(static_cast<double>(b[i][j])));
        diff = std::max(diff, std::fabs(static_cast<double>(a[i][j]) - b[i][j]));
      }
      worst = std::max(worst, diff / scale);
    }
    return worst;
  }
};

TEST_F(ParallelTest, TwoSolversAtBatchBEqualOneAtTwoB) {
  const Weights one = TrainOne(LeNetLike(8));
  const Weights two = TrainParallel(LeNetLike(4), 2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_NE(one, TrainOne(LeNetLike(4)));  // the batch matters: the check has teeth
  EXPECT_LT(RelativeDifference(two, one), 1e-5);
}

TEST_F(ParallelTest, FourSolversAtBatchBEqualOneAtFourB) {
  const Weights one = TrainOne(LeNetLike(8));
  const Weights four = TrainParallel(LeNetLike(2), 4);
  EXPECT_LT(RelativeDifference(four, one), 1e-5);
}

TEST_F(ParallelTest, TwoRunsAreBitwiseIdentical) {
  const Weights first = TrainParallel(LeNetLike(4, 30), 2);
  const Weights second = TrainParallel(LeNetLike(4, 30), 2);
  EXPECT_EQ(first, second);
}

// A net whose data layer is shareable (the probe) and one that is not (Data).
SolverParameter SharedLayerParam(const std::string& dir, int max_iter) {
  SolverParameter param;
  ReadProtoFromString(
      "base_lr: 0.01 lr_policy: 'fixed' display: 0 random_seed: 3 snapshot_after_train: false "
      "max_iter: " + std::to_string(max_iter) + " snapshot_prefix: '" + dir + "/shared'",
      "solver", &param);
  ReadProtoFromString(
      "name: 'shared'"
      "layer { name: 'probe' type: 'ConcurrencyProbe' top: 'x' top: 'y'"
      "  dummy_data_param { shape { dim: 2 dim: 6 } shape { dim: 2 dim: 3 }"
      "    data_filler { type: 'gaussian' } data_filler { type: 'gaussian' } } }"
      "layer { name: 'data' type: 'Data' top: 'data' top: 'label'"
      "  data_param { source: '" + dir + "/train' batch_size: 2 backend: LMDB } }"
      "layer { name: 'silence' type: 'Silence' bottom: 'data' bottom: 'label' }"
      "layer { name: 'fc' type: 'InnerProduct' bottom: 'x' top: 'p'"
      "  inner_product_param { num_output: 3 weight_filler { type: 'gaussian' std: 0.1 } } }"
      "layer { name: 'loss' type: 'EuclideanLoss' bottom: 'p' bottom: 'y' top: 'loss' }",
      "net", param.mutable_net_param());
  return param;
}

TEST_F(ParallelTest, ShareableLayerIsOneInstanceEnteredOneThreadAtATime) {
  ParallelTrainer<float> trainer(SharedLayerParam(dir_, 20), 3);
  trainer.Run();
  const Net<float>& root = *trainer.main_solver()->net();
  ASSERT_EQ(trainer.worker_solvers().size(), 2u);
  for (Solver<float>* worker : trainer.worker_solvers()) {
    const Net<float>& net = *worker->net();
    EXPECT_EQ(net.layer_by_name("probe"), root.layer_by_name("probe"));  // one instance
    EXPECT_TRUE(root.layer_by_name("probe")->IsShared());
    EXPECT_NE(net.layer_by_name("data"), root.layer_by_name("data"));  // one per solver
    EXPECT_FALSE(net.layer_by_name("data")->IsShared());
  }
  EXPECT_EQ(Probe::forwards.load(), 3 * 20);
  EXPECT_EQ(Probe::most_inside.load(), 1);
}

TEST_F(ParallelTest, AFailingSolverStopsEveryoneAndIsReported) {
  Probe::fail_rank = 2;
  ParallelTrainer<float> trainer(SharedLayerParam(dir_, 1000), 3);
  try {
    trainer.Run();
    FAIL() << "the failure of solver 2 was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("solver 2 fails on purpose"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(trainer.main_solver()->iter(), 1000);
}

TEST_F(ParallelTest, RootStopRequestStopsEverySolverAtTheSameIteration) {
  ParallelTrainer<float> trainer(LeNetLike(4, 1000), 2);
  int polls = 0;
  trainer.SetActionFunction([&polls] {
    return ++polls == 7 ? SolverAction::STOP : SolverAction::NONE;
  });
  trainer.Run();
  EXPECT_EQ(trainer.main_solver()->iter(), 7);
  EXPECT_EQ(trainer.worker_solvers()[0]->iter(), 7);
  EXPECT_TRUE(FileExists(dir_ + "/snap_iter_7.caffemodel"));  // stopped early: work kept
  EXPECT_EQ(WeightsOf(*trainer.worker_solvers()[0]), WeightsOf(*trainer.main_solver()));
}

}  // namespace
}  // namespace crema
