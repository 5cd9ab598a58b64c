// Resuming: training 200 iterations in one go and 100 + snapshot + resume +
// 100 give bitwise-identical weights, with data read from an LMDB that wraps
// around, random mirroring and cropping, and Dropout, in both snapshot formats.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "crema/data_reader.hpp"
#include "crema/layers/hdf5_output_layer.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "solver_weights.hpp"
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

  static constexpr const char* kCropMirror = "mirror: true crop_size: 5";

  SolverParameter Param(const std::string& format, const std::string& augmentation = kCropMirror,
                        const std::string& train_data = "") const {
    const std::string net =
        "name: 'resume'"
        "layer { name: 'data' type: 'Data' top: 'data' top: 'label' include { phase: TRAIN }"
        "  transform_param { scale: 0.004 " + augmentation + " }"
        "  data_param { source: '" + dir_ + "/train' batch_size: 4 backend: LMDB " +
        train_data + " } }"
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
};

TEST_F(ResumeTest, HundredPlusHundredEqualsTwoHundredBitwise) {
  for (const std::string format : {"BINARYPROTO", "HDF5"}) {
    SCOPED_TRACE(format);
    const SolverParameter param = Param(format);
    std::vector<std::vector<float>> straight, at_snapshot;
    {
      auto solver = CreateSolver<float>(param);
      solver->Step(100);  // snapshot: 100 writes the state here
      at_snapshot = LearnableWeights(*solver);
      solver->Step(100);
      straight = LearnableWeights(*solver);
    }
    EXPECT_EQ(DataReader::live_bodies(), 0u);
    const std::string state =
        dir_ + "/" + format + "_iter_100.solverstate" + (format == "HDF5" ? ".h5" : "");
    ASSERT_TRUE(FileExists(state));
    auto resumed = CreateSolver<float>(param);
    resumed->Restore(state);
    EXPECT_EQ(resumed->iter(), 100);
    EXPECT_EQ(LearnableWeights(*resumed), at_snapshot);
    resumed->Step(100);
    EXPECT_NE(LearnableWeights(*resumed), at_snapshot);
    EXPECT_EQ(LearnableWeights(*resumed), straight);  // bitwise
  }
}

// The augmentations draw from the batch's seeded stream, so a resumed run
// draws what the straight run drew: each alone and all together.
TEST_F(ResumeTest, AugmentedHundredPlusHundredEqualsTwoHundredBitwise) {
  std::vector<std::string> augmentations{
      "color_jitter { brightness: 0.3 contrast: 0.3 } crop_size: 5",
      "random_erasing { prob: 0.7 } crop_size: 5",
  };
#ifdef CREMA_OPENCV
  augmentations.push_back("random_resized_crop { scale_min: 0.4 } crop_size: 5");
  augmentations.push_back("rotation_degrees: 20 crop_size: 5 mean_value: 128");
  augmentations.push_back(
      "random_resized_crop { } crop_size: 5 rotation_degrees: 10 mirror: true "
      "color_jitter { brightness: 0.2 } random_erasing { }");
#endif
  for (const std::string& augmentation : augmentations) {
    SCOPED_TRACE(augmentation);
    const SolverParameter param = Param("BINARYPROTO", augmentation);
    std::vector<std::vector<float>> straight;
    {
      auto solver = CreateSolver<float>(param);
      solver->Step(200);
      straight = LearnableWeights(*solver);
    }
    auto resumed = CreateSolver<float>(param);
    resumed->Restore(dir_ + "/BINARYPROTO_iter_100.solverstate");
    resumed->Step(100);
    EXPECT_EQ(LearnableWeights(*resumed), straight);  // bitwise
  }
}

// A shuffling reader (data_param.shuffle) keeps its seed in the state, so
// the resumed passes have the straight run's orders; 200 iterations of 4
// cross the 37 records' passes many times. Shuffling is honoured: the run
// differs from one in database order.
TEST_F(ResumeTest, ShuffledHundredPlusHundredEqualsTwoHundredBitwise) {
  const SolverParameter param = Param("BINARYPROTO", kCropMirror, "shuffle: true");
  std::vector<std::vector<float>> straight, in_order;
  {
    auto solver = CreateSolver<float>(param);
    solver->Step(200);
    straight = LearnableWeights(*solver);
  }
  {
    auto solver = CreateSolver<float>(Param("HDF5"));  // its snapshots go elsewhere
    solver->Step(200);
    in_order = LearnableWeights(*solver);
  }
  EXPECT_NE(straight, in_order);
  auto resumed = CreateSolver<float>(param);
  resumed->Restore(dir_ + "/BINARYPROTO_iter_100.solverstate");
  resumed->Step(100);
  EXPECT_EQ(LearnableWeights(*resumed), straight);  // bitwise
}

// Without the reader positions (a state as BVLC Caffe writes it), the data
// restarts at the first record, so the run differs: the positions matter.
TEST_F(ResumeTest, WithoutReaderPositionsTheRunDiffers) {
  const SolverParameter param = Param("BINARYPROTO");
  std::vector<std::vector<float>> straight;
  {
    auto solver = CreateSolver<float>(param);
    solver->Step(120);
    straight = LearnableWeights(*solver);
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
  EXPECT_NE(LearnableWeights(*resumed), straight);
}

// The same with an HDF5Data layer that shuffles its files and rows: its
// position (file order, file, row order, row) travels in the solver state.
class HDF5ResumeTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // Three files of 7, 5 and 9 rows: batches of 4 straddle files.
    std::ofstream list(dir_ + "/list.txt");
    int first = 0;
    for (int rows : {7, 5, 9}) {
      const std::string file = dir_ + "/part" + std::to_string(first) + ".h5";
      WriteRows(file, rows, first);
      list << file << "\n";
      first += rows;
    }
  }

  // Rows of data [rows, 1, 4, 4] with varied values, labels 0..2.
  static void WriteRows(const std::string& file, int rows, int first) {
    LayerParameter param;
    param.set_name("out");
    param.mutable_hdf5_output_param()->set_file_name(file);
    HDF5OutputLayer<float> output(param);
    Blob<float> data(std::vector<int>{rows, 1, 4, 4}), label(std::vector<int>{rows});
    for (int r = 0; r < rows; ++r) {
      for (int p = 0; p < 16; ++p) {
        data.mutable_cpu_data()[r * 16 + p] = ((first + r) * 37 + p * 11) % 251 / 251.f;
      }
      label.mutable_cpu_data()[r] = static_cast<float>((first + r) % 3);
    }
    std::vector<Blob<float>*> bottom{&data, &label}, top;
    output.SetUp(bottom, top);
    output.Forward(bottom, top);
  }

  SolverParameter Param(const std::string& format) const {
    const std::string net =
        "name: 'resume_hdf5'"
        "layer { name: 'data' type: 'HDF5Data' top: 'data' top: 'label'"
        "  hdf5_data_param { source: '" + dir_ + "/list.txt' batch_size: 4 shuffle: true } }"
        "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
        "  convolution_param { num_output: 3 kernel_size: 2 weight_filler { type: 'xavier' } } }"
        "layer { name: 'drop' type: 'Dropout' bottom: 'conv' top: 'conv'"
        "  dropout_param { dropout_ratio: 0.3 } }"
        "layer { name: 'fc' type: 'InnerProduct' bottom: 'conv' top: 'fc'"
        "  inner_product_param { num_output: 3 weight_filler { type: 'gaussian' std: 0.1 } } }"
        "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'fc' bottom: 'label' top: 'loss' }";
    SolverParameter param;
    ReadProtoFromString("base_lr: 0.05 momentum: 0.9 lr_policy: 'fixed' max_iter: 200 "
                        "display: 0 random_seed: 3 snapshot: 100 snapshot_format: " +
                            format + " snapshot_prefix: '" + dir_ + "/" + format + "'",
                        "solver", &param);
    ReadProtoFromString(net, "net", param.mutable_net_param());
    return param;
  }

  std::string StateFile(const std::string& format) const {
    return dir_ + "/" + format + "_iter_100.solverstate" + (format == "HDF5" ? ".h5" : "");
  }
};

TEST_F(HDF5ResumeTest, HundredPlusHundredEqualsTwoHundredBitwise) {
  for (const std::string format : {"BINARYPROTO", "HDF5"}) {
    SCOPED_TRACE(format);
    const SolverParameter param = Param(format);
    std::vector<std::vector<float>> straight, at_snapshot;
    {
      auto solver = CreateSolver<float>(param);
      solver->Step(100);
      at_snapshot = LearnableWeights(*solver);
      solver->Step(100);
      straight = LearnableWeights(*solver);
    }
    auto resumed = CreateSolver<float>(param);
    resumed->Restore(StateFile(format));
    EXPECT_EQ(LearnableWeights(*resumed), at_snapshot);
    resumed->Step(100);
    EXPECT_NE(LearnableWeights(*resumed), at_snapshot);
    EXPECT_EQ(LearnableWeights(*resumed), straight);  // bitwise
  }
}

TEST_F(HDF5ResumeTest, WithoutThePositionTheRunDiffers) {
  const SolverParameter param = Param("BINARYPROTO");
  std::vector<std::vector<float>> straight;
  {
    auto solver = CreateSolver<float>(param);
    solver->Step(120);
    straight = LearnableWeights(*solver);
  }
  SolverState saved;
  ReadProtoFromBinaryFile(StateFile("BINARYPROTO"), &saved);
  ASSERT_EQ(saved.hdf5_data_position_size(), 1);
  EXPECT_EQ(saved.hdf5_data_position(0).file_order_size(), 3);
  saved.clear_hdf5_data_position();
  WriteProtoToBinaryFile(saved, StateFile("BINARYPROTO"));
  auto resumed = CreateSolver<float>(param);
  resumed->Restore(StateFile("BINARYPROTO"));
  resumed->Step(20);
  EXPECT_NE(LearnableWeights(*resumed), straight);
}

TEST_F(HDF5ResumeTest, APositionThatDoesNotFitTheFilesIsAUserError) {
  const SolverParameter param = Param("BINARYPROTO");
  CreateSolver<float>(param)->Step(100);
  SolverState saved;
  ReadProtoFromBinaryFile(StateFile("BINARYPROTO"), &saved);
  saved.mutable_hdf5_data_position(0)->add_file_order(7);  // a fourth file
  WriteProtoToBinaryFile(saved, StateFile("BINARYPROTO"));
  auto resumed = CreateSolver<float>(param);
  try {
    resumed->Restore(StateFile("BINARYPROTO"));
    FAIL() << "a position for four files restored over three";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("list.txt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'data' (HDF5Data)"), std::string::npos) << e.what();
  }
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
