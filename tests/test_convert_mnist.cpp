// ConvertMnist: idx headers that would be read wrongly are refused naming the
// file, and labels are the idx file's unsigned bytes.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "crema/data/converters/convert_mnist.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/db.hpp"
#include "test_error_message.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

class ConvertMnistTest : public ScratchDirTest {
 protected:
  // An idx file: magic number and dimensions (big-endian 32-bit), then bytes.
  std::string WriteIdx(const std::string& name, uint32_t magic, const std::vector<uint32_t>& dims,
                       const std::string& body) {
    std::vector<uint32_t> header{magic};
    header.insert(header.end(), dims.begin(), dims.end());
    std::string bytes;
    for (uint32_t value : header) {
      for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>(value >> shift);
    }
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes + body;
    return path;
  }
};

// 65536 x 65536 pixels is 0 in 32 bits: every image was written with no
// pixels and the header's sizes.
TEST_F(ConvertMnistTest, ImageSizesThatOverflowAreRefused) {
  const std::string images = WriteIdx("images", 2051, {1, 65536, 65536}, std::string(16, '\0'));
  const std::string labels = WriteIdx("labels", 2049, {1}, std::string(1, '\1'));
  const std::string message =
      ErrorMessageOf([&] { ConvertMnist(images, labels, dir_ + "/db", "lmdb"); });
  EXPECT_NE(message.find(images + ": images of 65536 x 65536 pixels"), std::string::npos)
      << message;
}

// A header claiming 1.6 GB images over a few bytes is a truncated file,
// found without allocating the image first (found by fuzzing: the buffer
// was sized from the header).
TEST_F(ConvertMnistTest, HugeImagesOverFewBytesAreATruncatedFile) {
  const std::string images = WriteIdx("images", 2051, {1, 40000, 40000}, std::string(16, '\0'));
  const std::string labels = WriteIdx("labels", 2049, {1}, std::string(1, '\1'));
  rusage before;
  getrusage(RUSAGE_SELF, &before);
  const std::string message =
      ErrorMessageOf([&] { ConvertMnist(images, labels, dir_ + "/db", "lmdb"); });
  rusage after;
  getrusage(RUSAGE_SELF, &after);
  EXPECT_NE(message.find(images + ": truncated file"), std::string::npos) << message;
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024)
      << "peak memory grew by " << after.ru_maxrss - before.ru_maxrss << " KiB";
}

// An idx label is an unsigned byte: 200 was stored as -56.
TEST_F(ConvertMnistTest, LabelsAreUnsignedBytes) {
  const std::string images = WriteIdx("images", 2051, {1, 2, 2}, std::string(4, '\7'));
  const std::string labels = WriteIdx("labels", 2049, {1}, std::string(1, static_cast<char>(200)));
  ConvertMnist(images, labels, dir_ + "/db", "lmdb");
  auto db = db::GetDB("lmdb");
  db->Open(dir_ + "/db", db::READ);
  auto cursor = db->NewCursor();
  ASSERT_TRUE(cursor->valid());
  Datum datum;
  ASSERT_TRUE(datum.ParseFromString(cursor->value()));
  EXPECT_EQ(datum.label(), 200);
  EXPECT_EQ(datum.height(), 2);
  EXPECT_EQ(datum.data(), std::string(4, '\7'));
}

}  // namespace
}  // namespace crema
