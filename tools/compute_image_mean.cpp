// Computes the per-pixel mean of the records of a Datum database (raw, or
// encoded JPEG/PNG in builds with OpenCV) and writes it as a BlobProto
// (.binaryproto), the mean_file a transform_param reads.
//   compute_image_mean [--backend=lmdb|leveldb] INPUT_DB [OUTPUT_FILE]
#include "crema/data/converters/compute_image_mean.hpp"

#include <gflags/gflags.h>

#include <vector>

#include "crema/common.hpp"
#include "crema/util/io.hpp"

DEFINE_string(backend, "lmdb", "The database backend: lmdb or leveldb");

namespace {

void ComputeMean(const std::string& input, const std::string& output) {
  const crema::BlobProto mean = crema::ComputeImageMean(input, FLAGS_backend);
  if (!output.empty()) {
    LOG(INFO) << "Write to " << output;
    crema::WriteProtoToBinaryFile(mean, output);
  }
  const std::vector<double> channel_means = crema::ChannelMeans(mean);
  for (size_t c = 0; c < channel_means.size(); ++c) {
    LOG(INFO) << "mean_value channel [" << c << "]: " << channel_means[c];
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
