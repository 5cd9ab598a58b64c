// Runs a trained net forward and stores the values of named blobs, one Datum
// (float_data, shape in channels/height/width) per item, in databases.
//   extract_features WEIGHTS NET BLOB1[,BLOB2...] DB1[,DB2...] NUM_BATCHES BACKEND [--gpu=N]
#include <gflags/gflags.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "crema/common.hpp"
#include "crema/net.hpp"
#include "crema/storage/partial_database.hpp"
#include "crema/util/db.hpp"

DEFINE_int32(gpu, -1, "Run on this GPU (default: the CPU)");

namespace {

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) items.push_back(item);
  return items;
}

// NUM_BATCHES: a whole number from 1 on, in full ("10x" is not ten).
int BatchCount(const std::string& text) {
  size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (...) {
    used = 0;
  }
  CREMA_REQUIRE(used == text.size() && value > 0 && value <= INT_MAX,
                "NUM_BATCHES '" << text << "' is not a positive whole number");
  return static_cast<int>(value);
}

void Extract(const std::string& weights, const std::string& net_file, const std::string& blob_list,
             const std::string& db_list, int num_batches, const std::string& backend) {
  CREMA_REQUIRE(FLAGS_gpu >= -1, "--gpu is " << FLAGS_gpu << "; give a device id, or -1 for the CPU");
  if (FLAGS_gpu >= 0) {
    crema::Context::SetDevice(FLAGS_gpu);
    crema::Context::set_mode(crema::Context::GPU);
  }
  crema::Net<float> net(net_file, crema::TEST);
  net.CopyTrainedLayersFrom(weights);
  const std::vector<std::string> blobs = Split(blob_list), dbs = Split(db_list);
  CREMA_REQUIRE(blobs.size() == dbs.size(),
                blobs.size() << " blob names but " << dbs.size() << " databases; give one each");
  CREMA_REQUIRE(num_batches > 0, "the number of batches must be positive");
  // Each database is written under a temporary name and renamed into place
  // when complete: a failure leaves none of them (PartialDatabase).
  std::vector<std::unique_ptr<crema::PartialDatabase>> partials;
  std::vector<std::unique_ptr<crema::db::DB>> outputs;
  std::vector<std::unique_ptr<crema::db::Transaction>> transactions;
  for (size_t i = 0; i < blobs.size(); ++i) {
    CREMA_REQUIRE(net.has_blob(blobs[i]),
                  "the net " << net_file << " has no blob '" << blobs[i] << "'");
    partials.emplace_back(new crema::PartialDatabase(dbs[i]));
    outputs.push_back(crema::db::GetDB(backend));
    outputs.back()->Open(partials.back()->temporary_path(), crema::db::NEW);
    transactions.push_back(outputs.back()->NewTransaction());
  }
  std::vector<int> written(blobs.size(), 0);
  crema::Datum datum;
  std::string value;
  char key[16];
  for (int batch = 0; batch < num_batches; ++batch) {
    net.Forward();
    for (size_t i = 0; i < blobs.size(); ++i) {
      const auto blob = net.blob_by_name(blobs[i]);
      const int num = blob->shape(0);
      const int dim = blob->count() / std::max(num, 1);
      const float* data = blob->cpu_data();
      for (int n = 0; n < num; ++n) {
        datum.Clear();
        datum.set_channels(blob->num_axes() > 1 ? blob->shape(1) : 1);
        datum.set_height(blob->num_axes() > 2 ? blob->shape(2) : 1);
        datum.set_width(blob->num_axes() > 3 ? blob->count(3) : 1);
        for (int d = 0; d < dim; ++d) datum.add_float_data(data[n * dim + d]);
        snprintf(key, sizeof(key), "%010d", written[i]++);
        datum.SerializeToString(&value);
        transactions[i]->Put(key, value);
      }
      transactions[i]->Commit();
      LOG(INFO) << "Extracted features of " << written[i] << " items for blob " << blobs[i];
    }
  }
  for (size_t i = 0; i < blobs.size(); ++i) {
    transactions[i].reset();
    outputs[i]->Close();
    partials[i]->Publish();
  }
  LOG(INFO) << "Successfully extracted the features!";
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(
      "Extracts the values of named blobs of a trained net into databases.\n"
      "Usage: extract_features WEIGHTS NET BLOB1[,BLOB2...] DB1[,DB2...] NUM_BATCHES "
      "lmdb|leveldb [--gpu=N]");
  crema::GlobalInit(&argc, &argv);
  if (argc != 7) {
    gflags::ShowUsageWithFlagsRestrict(argv[0], "tools/extract_features");
    return 1;
  }
  try {
    Extract(argv[1], argv[2], argv[3], argv[4], BatchCount(argv[5]), argv[6]);
    return 0;
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
}
