// Computes the per-pixel mean of the records of a Datum database and writes
// it as a BlobProto (.binaryproto), the mean_file a transform_param reads.
//   compute_image_mean [--backend=lmdb|leveldb] INPUT_DB [OUTPUT_FILE]
#include <gflags/gflags.h>

#include <vector>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/db.hpp"
#include "crema/util/io.hpp"

DEFINE_string(backend, "lmdb", "The database backend: lmdb or leveldb");

namespace {

void ComputeMean(const std::string& input, const std::string& output) {
  auto db = crema::db::GetDB(FLAGS_backend);
  db->Open(input, crema::db::READ);
  auto cursor = db->NewCursor();
  CREMA_REQUIRE(cursor->valid(), input << ": the database holds no records");
  crema::Datum datum;
  std::vector<double> sum;
  crema::BlobProto mean;
  int count = 0;
  for (; cursor->valid(); cursor->Next(), ++count) {
    CREMA_REQUIRE(datum.ParseFromString(cursor->value()),
                  input << ": record '" << cursor->key() << "' is not a Datum");
    CREMA_REQUIRE(!datum.encoded(), input << ": encoded records need OpenCV (not in this build)");
    const size_t size = static_cast<size_t>(datum.channels()) * datum.height() * datum.width();
    if (count == 0) {
      sum.assign(size, 0.0);
      mean.set_num(1);
      mean.set_channels(datum.channels());
      mean.set_height(datum.height());
      mean.set_width(datum.width());
    }
    CREMA_REQUIRE(sum.size() == size, input << ": record '" << cursor->key()
                                            << "' has another shape than the first");
    if (!datum.data().empty()) {
      for (size_t i = 0; i < size; ++i) sum[i] += static_cast<uint8_t>(datum.data()[i]);
    } else {
      for (size_t i = 0; i < size; ++i) sum[i] += datum.float_data(static_cast<int>(i));
    }
    if ((count + 1) % 10000 == 0) LOG(INFO) << "Processed " << count + 1 << " files.";
  }
  for (double value : sum) mean.add_data(static_cast<float>(value / count));
  LOG(INFO) << "Processed " << count << " files.";
  if (!output.empty()) {
    LOG(INFO) << "Write to " << output;
    crema::WriteProtoToBinaryFile(mean, output);
  }
  const int dim = mean.height() * mean.width();
  for (int c = 0; c < mean.channels(); ++c) {
    double channel_sum = 0;
    for (int i = 0; i < dim; ++i) channel_sum += mean.data(c * dim + i);
    LOG(INFO) << "mean_value channel [" << c << "]: " << channel_sum / dim;
  }
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(
      "Computes the mean image of a Datum database.\n"
      "Usage: compute_image_mean [--backend=lmdb|leveldb] INPUT_DB [OUTPUT_FILE]");
  crema::GlobalInit(&argc, &argv);
  if (argc < 2 || argc > 3) {
    gflags::ShowUsageWithFlagsRestrict(argv[0], "tools/compute_image_mean");
    return 1;
  }
  try {
    ComputeMean(argv[1], argc == 3 ? argv[2] : "");
    return 0;
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
}
