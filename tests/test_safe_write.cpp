// The safe-write rule for every file Crema writes (WriteFileAtomically, and
// the writers built on it: binary and text protos, HDF5 weights and solver
// states, the ONNX export; the converters' databases through
// PartialDatabase): a write that fails leaves the previous file
// byte-identical, nothing half-written and no temporary beside it, and says
// which file and why. A full disk is played by a file-size limit
// (RLIMIT_FSIZE): writes past it fail with EFBIG ("File too large"), as
// they fail with ENOSPC on a full disk.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "crema/data/converters/convert_mnist.hpp"
#include "crema/layers/hdf5_output_layer.hpp"
#include "crema/net.hpp"
#include "crema/storage/hdf5.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"
#ifdef CREMA_ONNX
#include "crema/export/onnx_export.hpp"
#endif

namespace crema {
namespace {

// Files may grow to `bytes` while it lives (the process's soft limit; the
// signal a write past it raises is ignored, so the write fails instead).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, previous_handler_);
  }

 private:
  rlimit saved_;
  void (*previous_handler_)(int);
};

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<std::string> FolderEntries(const std::string& folder) {
  std::vector<std::string> names;
  DIR* dir = opendir(folder.c_str());
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  return names;
}

class SafeWriteTest : public ScratchDirTest {
 protected:
  // Runs `write` (which writes `path`, where a small good file lies) under a
  // limit too small for it, and expects: an Error naming the file and the
  // system's reason, the old file byte-identical, nothing else in the folder.
  void ExpectFailureKeepsThePreviousFile(const std::string& path,
                                         const std::function<void()>& write) {
    const std::string before = Contents(path);
    ASSERT_FALSE(before.empty());
    try {
      FileSizeLimit limit(before.size() + 16);
      write();
      ADD_FAILURE() << "the write of " << path << " did not fail";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_NE(message.find("File too large"), std::string::npos) << message;
    }
    EXPECT_EQ(Contents(path), before) << path << " changed";
    const std::vector<std::string> left = FolderEntries(path.substr(0, path.rfind('/')));
    EXPECT_EQ(left.size(), 1u) << "something was left beside " << path;
  }

  std::unique_ptr<Net<float>> SmallNet(int outputs) {
    NetParameter param = ParseNet(
        "name: 'small' layer { name: 'data' type: 'Input' top: 'data'"
        "  input_param { shape { dim: 1 dim: 8 } } }"
        "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip'"
        "  inner_product_param { num_output: " +
        std::to_string(outputs) + " weight_filler { type: 'gaussian' } } }");
    return std::unique_ptr<Net<float>>(new Net<float>(param));
  }
};

TEST_F(SafeWriteTest, WriteFileAtomically) {
  const std::string path = dir_ + "/notes.txt";
  WriteFileAtomically(path, "the good version\n");
  ExpectFailureKeepsThePreviousFile(path,
                                    [&] { WriteFileAtomically(path, std::string(1 << 16, 'x')); });
}

TEST_F(SafeWriteTest, BinaryWeights) {
  const std::string path = dir_ + "/small.caffemodel";
  NetParameter weights;
  SmallNet(2)->ToProto(&weights);
  WriteProtoToBinaryFile(weights, path);
  ExpectFailureKeepsThePreviousFile(path, [&] {
    NetParameter bigger;
    SmallNet(4000)->ToProto(&bigger);
    WriteProtoToBinaryFile(bigger, path);
  });
}

TEST_F(SafeWriteTest, Hdf5Weights) {
  const std::string path = dir_ + "/small.caffemodel.h5";
  SmallNet(2)->ToHDF5(path);
  ExpectFailureKeepsThePreviousFile(path, [&] { SmallNet(4000)->ToHDF5(path); });
  // And what is left reads back.
  auto net = SmallNet(2);
  net->CopyTrainedLayersFrom(path);
}

TEST_F(SafeWriteTest, Hdf5SolverState) {
  const std::string path = dir_ + "/small.solverstate.h5";
  SolverState state;
  state.set_iter(3);
  WriteSolverStateToHDF5(path, state);
  ExpectFailureKeepsThePreviousFile(path, [&] {
    SolverState bigger;
    bigger.set_iter(4);
    BlobProto* history = bigger.add_history();
    history->mutable_shape()->add_dim(1 << 15);
    for (int i = 0; i < (1 << 15); ++i) history->add_data(1.0f);
    WriteSolverStateToHDF5(path, bigger);
  });
  SolverState read;
  ReadSolverStateFromHDF5(path, &read);
  EXPECT_EQ(read.iter(), 3);
}

// HDF5Output rows: `batches` forwards of `rows` rows of 64 values each,
// from a layer that lives for the call (or throws out of it), then Finish.
void WriteHdf5Rows(const std::string& path, int batches, int rows,
                   const std::function<void()>& after_forwards = {}) {
  LayerParameter param;
  param.set_name("out");
  param.mutable_hdf5_output_param()->set_file_name(path);
  HDF5OutputLayer<float> output(param);
  Blob<float> data(std::vector<int>{rows, 64}), label(std::vector<int>{rows});
  std::vector<Blob<float>*> bottom{&data, &label}, top;
  output.SetUp(bottom, top);
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < data.count(); ++i) data.mutable_cpu_data()[i] = float(b);
    for (int i = 0; i < rows; ++i) label.mutable_cpu_data()[i] = float(i);
    output.Forward(bottom, top);
  }
  if (after_forwards) after_forwards();
  output.Finish();
}

TEST_F(SafeWriteTest, Hdf5Output) {
  const std::string path = dir_ + "/rows.h5";
  WriteHdf5Rows(path, 1, 2);
  ExpectFailureKeepsThePreviousFile(path, [&] { WriteHdf5Rows(path, 50, 100); });
}

// The file is replaced when the layer is done, not batch by batch, and not
// at all by a run that fails.
TEST_F(SafeWriteTest, Hdf5OutputReplacesTheFileOnlyWhenTheRunEnds) {
  const std::string path = dir_ + "/rows.h5";
  WriteHdf5Rows(path, 1, 2);
  const std::string before = Contents(path);
  WriteHdf5Rows(path, 3, 5, [&] { EXPECT_EQ(Contents(path), before); });
  const std::string after = Contents(path);
  EXPECT_NE(after, before);
  EXPECT_THROW(WriteHdf5Rows(path, 2, 7, [] { CREMA_FAIL("a later layer failed"); }), Error);
  EXPECT_EQ(Contents(path), after);
  EXPECT_EQ(FolderEntries(dir_).size(), 1u) << "a temporary was left behind";
}

TEST_F(SafeWriteTest, Hdf5OutputChecksItsFolderAtSetUp) {
  const std::string path = dir_ + "/missing/rows.h5";
  try {
    WriteHdf5Rows(path, 1, 2);
    ADD_FAILURE() << "a missing folder must be refused at set-up";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": the folder '" + dir_ + "/missing' does not exist"),
              std::string::npos)
        << e.what();
  }
}

#ifdef CREMA_ONNX
TEST_F(SafeWriteTest, OnnxExport) {
  // The net's files here, the export alone in a folder of its own.
  const auto write_net = [&](int outputs, const std::string& name) {
    auto net = SmallNet(outputs);
    NetParameter param;
    net->ToProto(&param);
    WriteProtoToBinaryFile(param, dir_ + "/" + name + ".caffemodel");
    for (auto& layer : *param.mutable_layer()) layer.clear_blobs();
    WriteProtoToTextFile(param, dir_ + "/" + name + ".prototxt");
  };
  write_net(2, "small");
  write_net(4000, "big");
  ASSERT_EQ(mkdir((dir_ + "/out").c_str(), 0755), 0);
  const std::string path = dir_ + "/out/model.onnx";
  ExportOnnx(dir_ + "/small.prototxt", dir_ + "/small.caffemodel", path, {});
  ExpectFailureKeepsThePreviousFile(
      path, [&] { ExportOnnx(dir_ + "/big.prototxt", dir_ + "/big.caffemodel", path, {}); });
}
#endif

// The MNIST converter writes its database under a temporary name: a failure
// leaves neither a database under the final name nor the temporary one.
TEST_F(SafeWriteTest, MnistDatabase) {
  const std::string images = dir_ + "/images", labels = dir_ + "/labels";
  {
    std::ofstream out(images, std::ios::binary);
    const unsigned char header[] = {0, 0, 8, 3, 0, 0, 0, 200, 0, 0, 0, 28, 0, 0, 0, 28};
    out.write(reinterpret_cast<const char*>(header), sizeof(header));
    out << std::string(200 * 28 * 28, '\x7f');
    std::ofstream label_out(labels, std::ios::binary);
    const unsigned char label_header[] = {0, 0, 8, 1, 0, 0, 0, 200};
    label_out.write(reinterpret_cast<const char*>(label_header), sizeof(label_header));
    label_out << std::string(200, '\x03');
  }
  const std::string db = dir_ + "/mnist_lmdb";
  {
    FileSizeLimit limit(64 * 1024);
    EXPECT_THROW(ConvertMnist(images, labels, db, "leveldb"), Error);
  }
  const std::vector<std::string> left = FolderEntries(dir_);
  EXPECT_EQ(left.size(), 2u) << "a database (or its temporary) was left behind";
  ConvertMnist(images, labels, db, "lmdb");
  struct stat info;
  EXPECT_EQ(stat((db + "/data.mdb").c_str(), &info), 0);
}

}  // namespace
}  // namespace crema
