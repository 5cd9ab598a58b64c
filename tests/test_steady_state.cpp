// The steady state of training allocates nothing: after the first
// iterations (and the first test pass) every buffer exists, so further
// training steps and tests leave the allocation count where it was.
#include <gtest/gtest.h>

#include <string>

#include "crema/sgd_solvers.hpp"
#include "crema/syncedmem.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

class SteadyStateTest : public ScratchDirTest {};

TEST_F(SteadyStateTest, TrainingStepsAndTestsAllocateNoBuffers) {
  WriteDatumLMDB(
      dir_ + "/db", 40, 10, 10, [](int i, int p) { return (i * 7 + p * 13) % 256; },
      [](int i) { return i % 5; });
  const std::string data = "data_param { source: '" + dir_ + "/db' backend: LMDB ";
  SolverParameter param;
  ReadProtoFromString("base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: 'inv' "
                      "gamma: 0.0001 power: 0.75 display: 5 max_iter: 100 random_seed: 2 "
                      "test_iter: 2 test_interval: 5 snapshot_after_train: false",
                      "solver", &param);
  ReadProtoFromString(
      "name: 'steady'"
      "layer { name: 'data' type: 'Data' top: 'data' top: 'label' include { phase: TRAIN }"
      "  transform_param { scale: 0.00390625 mirror: true crop_size: 8 } " + data +
          "batch_size: 6 } }"
      "layer { name: 'data' type: 'Data' top: 'data' top: 'label' include { phase: TEST }"
      "  transform_param { scale: 0.00390625 crop_size: 8 } " + data + "batch_size: 4 } }"
      "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
      "  convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: 'xavier' } } }"
      "layer { name: 'pool' type: 'Pooling' bottom: 'conv' top: 'pool'"
      "  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }"
      "layer { name: 'ip' type: 'InnerProduct' bottom: 'pool' top: 'ip'"
      "  inner_product_param { num_output: 8 weight_filler { type: 'xavier' } } }"
      "layer { name: 'relu' type: 'ReLU' bottom: 'ip' top: 'ip' }"
      "layer { name: 'drop' type: 'Dropout' bottom: 'ip' top: 'ip' }"
      "layer { name: 'out' type: 'InnerProduct' bottom: 'ip' top: 'out'"
      "  inner_product_param { num_output: 5 weight_filler { type: 'xavier' } } }"
      "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'out' bottom: 'label' top: 'loss' }"
      "layer { name: 'acc' type: 'Accuracy' bottom: 'out' bottom: 'label' top: 'acc'"
      "  include { phase: TEST } }",
      "net", param.mutable_net_param());
  auto solver = CreateSolver<float>(param);
  const uint64_t built = SyncedMemory::allocations();
  solver->Step(6);  // every buffer, the test net's included, is allocated by now
  const uint64_t warm = SyncedMemory::allocations();
  EXPECT_GT(warm, built);  // the first steps do allocate (gradients, buffers): the count sees it
  solver->Step(30);        // 30 steps and 6 test passes
  EXPECT_EQ(SyncedMemory::allocations(), warm);
}

}  // namespace
}  // namespace crema
