// Reading MNIST-format (idx) files, gzipped or not, into Datum databases.
#include "crema/data/converters/convert_mnist.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/storage/partial_database.hpp"
#include "crema/util/db.hpp"

namespace crema {

namespace {

// Reads an idx file through zlib, which passes plain files through as is.
class IdxFile {
 public:
  explicit IdxFile(const std::string& path) : path_(path) {
    file_ = gzopen(path.c_str(), "rb");
    CREMA_REQUIRE(file_, path << ": cannot open file");
  }
  ~IdxFile() {
    if (file_) gzclose(file_);
  }
  uint32_t ReadBigEndian() {
    unsigned char bytes[4];
    Read(bytes, 4);
    return (uint32_t(bytes[0]) << 24) | (uint32_t(bytes[1]) << 16) | (uint32_t(bytes[2]) << 8) |
           uint32_t(bytes[3]);
  }
  void Read(void* buffer, size_t size) {
    const int got = gzread(file_, buffer, static_cast<unsigned>(size));
    CREMA_REQUIRE(got == static_cast<int>(size),
                  path_ << ": truncated file (wanted " << size << " more bytes)");
  }
  // Reads `size` bytes into *bytes in chunks of at most 1 MiB, so that a
  // header claiming gigabyte images costs memory only for the bytes the
  // file really holds (a truncated file fails at its end, not at malloc).
  void ReadGrowing(size_t size, std::string* bytes) {
    constexpr size_t kChunk = size_t(1) << 20;
    bytes->clear();
    while (bytes->size() < size) {
      const size_t start = bytes->size();
      const size_t chunk = std::min(kChunk, size - start);
      bytes->resize(start + chunk);
      Read(&(*bytes)[start], chunk);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

}  // namespace

void ConvertMnist(const std::string& image_path, const std::string& label_path,
                  const std::string& db_path, const std::string& backend) {
  IdxFile images(image_path), labels(label_path);
  const uint32_t image_magic = images.ReadBigEndian();
  CREMA_REQUIRE(image_magic == 2051, image_path << ": not an idx image file (magic " << image_magic
                                                << ", expected 2051)");
  const uint32_t label_magic = labels.ReadBigEndian();
  CREMA_REQUIRE(label_magic == 2049, label_path << ": not an idx label file (magic " << label_magic
                                                << ", expected 2049)");
  const uint32_t num_items = images.ReadBigEndian();
  const uint32_t num_labels = labels.ReadBigEndian();
  CREMA_REQUIRE(num_items == num_labels, image_path << " holds " << num_items << " images but "
                                                    << label_path << " " << num_labels
                                                    << " labels");
  const uint32_t rows = images.ReadBigEndian();
  const uint32_t cols = images.ReadBigEndian();
  // rows * cols in 32 bits could wrap (65536 x 65536 is 0): images of no
  // bytes would be written with the header's sizes.
  CREMA_REQUIRE(rows > 0 && cols > 0 && uint64_t(rows) * cols <= INT_MAX,
                image_path << ": images of " << rows << " x " << cols
                           << " pixels; expected positive sizes of at most " << INT_MAX
                           << " pixels in all");

  auto db = db::GetDB(backend);
  PartialDatabase partial(db_path);
  db->Open(partial.temporary_path(), db::NEW);
  auto txn = db->NewTransaction();
  LOG(INFO) << "A total of " << num_items << " items.";
  LOG(INFO) << "Rows: " << rows << " Cols: " << cols;
  const size_t image_size = size_t(rows) * cols;
  std::string pixels;
  Datum datum;
  datum.set_channels(1);
  datum.set_height(static_cast<int>(rows));
  datum.set_width(static_cast<int>(cols));
  std::string value;
  char key[16];
  uint32_t item = 0;
  for (; item < num_items; ++item) {
    images.ReadGrowing(image_size, &pixels);
    unsigned char label;  // idx labels are unsigned bytes: 200 is not -56
    labels.Read(&label, 1);
    datum.set_data(pixels);
    datum.set_label(label);
    snprintf(key, sizeof(key), "%08u", item);
    datum.SerializeToString(&value);
    txn->Put(key, value);
    if ((item + 1) % 1000 == 0) txn->Commit();
  }
  txn->Commit();
  txn.reset();
  db->Close();
  partial.Publish();
  LOG(INFO) << "Processed " << item << " files.";
}

}  // namespace crema
