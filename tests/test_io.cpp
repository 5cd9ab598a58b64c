// Proto files: a bad prototxt names the file, line and column; a missing or
// corrupt binary names the file; writes are atomic.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "crema/proto/crema.pb.h"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

class IoTest : public ScratchDirTest {
 protected:
  std::string Write(const std::string& name, const std::string& contents) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << contents;
    return path;
  }
};

std::string MessageOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(IoTest, TextRoundTrip) {
  NetParameter net;
  net.set_name("tiny");
  net.add_layer()->set_type("ReLU");
  const std::string path = dir_ + "/net.prototxt";
  WriteProtoToTextFile(net, path);
  NetParameter back;
  ReadProtoFromTextFile(path, &back);
  EXPECT_EQ(back.name(), "tiny");
  EXPECT_EQ(back.layer(0).type(), "ReLU");
}

TEST_F(IoTest, MalformedTextNamesFileLineAndColumn) {
  const std::string path = Write("bad.prototxt", "name: \"x\"\nlayer {\n  nmae: \"y\"\n}\n");
  NetParameter net;
  const std::string message = MessageOf([&] { ReadProtoFromTextFile(path, &net); });
  EXPECT_NE(message.find(path + ":3:"), std::string::npos) << message;
  EXPECT_NE(message.find("nmae"), std::string::npos) << message;
  EXPECT_NE(message.find("NetParameter"), std::string::npos) << message;
}

TEST_F(IoTest, MissingFileIsNamed) {
  NetParameter net;
  const std::string path = dir_ + "/nowhere.prototxt";
  const std::string message = MessageOf([&] { ReadProtoFromTextFile(path, &net); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  const std::string binary = MessageOf([&] { ReadProtoFromBinaryFile(path, &net); });
  EXPECT_NE(binary.find(path), std::string::npos) << binary;
}

// A directory opens and reads as nothing: it parsed as an empty message (an
// empty mean BlobProto, a solver with no net) instead of an error naming it.
TEST_F(IoTest, DirectoryIsRefusedByName) {
  NetParameter net;
  const std::string text = MessageOf([&] { ReadProtoFromTextFile(dir_, &net); });
  EXPECT_NE(text.find(dir_ + ": is a directory"), std::string::npos) << text;
  BlobProto blob;
  const std::string binary = MessageOf([&] { ReadProtoFromBinaryFile(dir_, &blob); });
  EXPECT_NE(binary.find(dir_ + ": is a directory"), std::string::npos) << binary;
}

TEST_F(IoTest, BinaryRoundTripAndCorruption) {
  BlobProto blob;
  for (int i = 0; i < 100; ++i) blob.add_data(i * 0.5f);
  const std::string path = dir_ + "/blob.binaryproto";
  WriteProtoToBinaryFile(blob, path);
  BlobProto back;
  ReadProtoFromBinaryFile(path, &back);
  ASSERT_EQ(back.data_size(), 100);
  EXPECT_EQ(back.data(99), 49.5f);
  // Cut the file short: it must be refused by name, not crash.
  ASSERT_EQ(truncate(path.c_str(), 37), 0);
  const std::string message = MessageOf([&] { ReadProtoFromBinaryFile(path, &back); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST_F(IoTest, FailedWriteLeavesPreviousFileIntact) {
  const std::string path = Write("state", "previous");
  ASSERT_EQ(chmod(dir_.c_str(), 0500), 0);  // no new files in the folder
  const bool is_root = geteuid() == 0;      // root ignores permissions
  if (!is_root) {
    EXPECT_THROW(WriteFileAtomically(path, "new"), Error);
    std::ifstream in(path);
    std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(contents, "previous");
  }
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  // Into a folder that does not exist: refused, nothing written.
  EXPECT_THROW(WriteFileAtomically(dir_ + "/missing/state", "new"), Error);
  WriteFileAtomically(path, "new");
  std::ifstream in(path);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "new");
}

}  // namespace
}  // namespace crema
