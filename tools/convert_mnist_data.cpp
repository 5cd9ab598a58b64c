// Converts MNIST-format (idx) image and label files into a Datum database.
//   convert_mnist_data [--backend=lmdb|leveldb] IMAGES LABELS DB
#include <gflags/gflags.h>

#include "crema/common.hpp"
#include "crema/data/converters/convert_mnist.hpp"

DEFINE_string(backend, "lmdb", "The database backend to write: lmdb or leveldb");

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(
      "Converts MNIST-format (idx) images and labels into a database of Datum records.\n"
      "Usage: convert_mnist_data [--backend=lmdb|leveldb] IMAGES LABELS DB");
  crema::GlobalInit(&argc, &argv);
  if (argc != 4) {
    gflags::ShowUsageWithFlagsRestrict(argv[0], "tools/convert_mnist_data");
    return 1;
  }
  try {
    crema::ConvertMnist(argv[1], argv[2], argv[3], FLAGS_backend);
    return 0;
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
}
