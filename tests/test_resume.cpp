// Resuming: training 200 iterations in one go and 100 + snapshot + resume +
// 100 give bitwise-identical weights, with data read from an LMDB that wraps
// around, random mirroring and cropping, and Dropout, in both snapshot formats.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "crema/data_reader.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

class ResumeTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // 1x6x6 images of varied pixels, labels 0..2. 37 training records, not a
    // multiple of the batch: reading wraps mid-batch.
    const auto pixel = [](int i, int p) { return (i * 37 + p * 11) % 251; };
    const auto label = [](int i) { return i % 3; };
    WriteDatumLMDB(dir_ + "/train", 37, 6, 6, pixel, label);
    WriteDatumLMDB(dir_ + "/test", 11, 6, 6, pixel, label);
  }

  SolverParameter Param(const std::string& format) const {
    const std::string net =
        "name: 'resume'"
        "layer { name: 'data' type: 'Data' top: 'data' top: 'label' include { phase: TRAIN }"
        "  transform_param { scale: 0.004 mirror: true crop_size: 5 }"
        "  data_param { source: '" + dir_ + "/train' batch_size: 4 backend: LMDB } }"
        "layer { name: 'data' type: 'Data' top: 'data' top: 'label' include { phase: TEST }"
        "  transform_param { scale: 0.004 crop_size: 5 }"
        "  data_param { source: '" + dir_ + "/test' batch_size: 3 backend: LMDB } }"
        "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
        "  convolution_param { num_output: 3 kernel_size: 2 weight_filler { type: 'xavier' } } }"
        "layer { name: 'relu' type: 'ReLU' bottom: 'conv' top: 'conv' }"
        "layer { name: 'drop' type: 'Dropout' bottom: 'conv' top: 'conv'"
        "  dropout_param { dropout_ratio: 0.3 } }"
        "layer { name: 'fc' type: 'InnerProduct' bottom: 'conv' top: 'fc'"
        "  inner_product_param { num_output: 3 weight_filler { type: 'gaussian' std: 0.1 } } }"
        "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'fc' bottom: 'label' top: 'loss' }"
        "layer { name: 'accuracy' type: 'Accuracy' bottom: 'fc' bottom: 'label' top: 'acc'"
        "  include { phase: TEST } }";
    SolverParameter param;
    ReadProtoFromString("base_lr: 0.05 momentum: 0.9 weight_decay: 0.001 lr_policy: 'inv' "
                        "gamma: 0.01 power: 0.75 max_iter: 200 display: 0 random_seed: 7 "
                        "test_iter: 2 test_interval: 30 snapshot: 100 snapshot_format: " +
                            format + " snapshot_prefix: '" + dir_ + "/" + format + "'",
                        "solver", &param);
    ReadProtoFromString(net, "net", param.mutable_net_param());
    return param;
  }

  static std::vector<std::vector<float>> Weights(const Solver<float>& solver) {
    std::vector<std::vector<float>> weights;
    for (const Blob<float>* blob : solver.net()->learnable_params()) {
      weights.emplace_back(blob->cpu_data(), blob->cpu_data() + blob->count());
    }
    return weights;
  }

};

TEST_F(ResumeTest, HundredPlusHundredEqualsTwoHundredBitwise) {
  for (const std::string format : {"BINARYPROTO", "HDF5"}) {
    SCOPED_TRACE(format);
    const SolverParameter param = Param(format);
    std::vector<std::vector<float>> straight, at_snapshot;
    {
      auto solver = CreateSolver<float>(param);
      solver->Step(100);  // snapshot: 100 writes the state here
      at_snapshot = Weights(*solver);
      solver->Step(100);
      straight = Weights(*solver);
    }
    EXPECT_EQ(DataReader::live_bodies(), 0u);
    const std::string state =
        dir_ + "/" + format + "_iter_100.solverstate" + (format == "HDF5" ? ".h5" : "");
    ASSERT_TRUE(FileExists(state));
    auto resumed = CreateSolver<float>(param);
    resumed->Restore(state);
    EXPECT_EQ(resumed->iter(), 100);
    EXPECT_EQ(Weights(*resumed), at_snapshot);
    resumed->Step(100);
    EXPECT_NE(Weights(*resumed), at_snapshot);
    EXPECT_EQ(Weights(*resumed), straight);  // bitwise
  }
}

// Without the reader positions (a state as BVLC Caffe writes it), the data
// restarts at the first record, so the run differs: the positions matter.
TEST_F(ResumeTest, WithoutReaderPositionsTheRunDiffers) {
  const SolverParameter param = Param("BINARYPROTO");
  std::vector<std::vector<float>> straight;
  {
    auto solver = CreateSolver<float>(param);
    solver->Step(120);
    straight = Weights(*solver);
  }
  const std::string state = dir_ + "/BINARYPROTO_iter_100.solverstate";
  SolverState saved;
  ReadProtoFromBinaryFile(state, &saved);
  ASSERT_EQ(saved.data_position_size(), 2);  // the TRAIN and the TEST reader
  EXPECT_EQ(saved.data_position(0).position(), 400u);  // 100 batches of 4
  EXPECT_EQ(saved.data_position(0).batches(), 100u);
  saved.clear_data_position();
  WriteProtoToBinaryFile(saved, state);
  auto resumed = CreateSolver<float>(param);
  resumed->Restore(state);
  resumed->Step(20);
  EXPECT_NE(Weights(*resumed), straight);
}

TEST_F(ResumeTest, CorruptStateIsAUserError) {
  const SolverParameter param = Param("HDF5");
  auto solver = CreateSolver<float>(param);
  const std::string bad = dir_ + "/bad.solverstate.h5";
  WriteFileAtomically(bad, "not an HDF5 file");
  try {
    solver->Restore(bad);
    FAIL() << "a corrupt state loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crema
