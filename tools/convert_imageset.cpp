// Converts a folder of images listed in a text file into a Datum database,
// with Caffe's flags and record layout.
//   convert_imageset [FLAGS] ROOTFOLDER/ LISTFILE DB_NAME
#include "crema/data/converters/convert_imageset.hpp"

#include <gflags/gflags.h>

#include "crema/common.hpp"

DEFINE_bool(gray, false, "When this option is on, treat images as grayscale ones");
DEFINE_bool(shuffle, false,
            "Randomly shuffle the order of images and their labels (a fixed seed: the same "
            "order every run)");
DEFINE_string(backend, "lmdb", "The backend {lmdb, leveldb} for storing the result");
DEFINE_int32(resize_width, 0, "Width images are resized to");
DEFINE_int32(resize_height, 0, "Height images are resized to");
DEFINE_bool(check_size, false,
            "When this option is on, check that all the datum have the same size");
DEFINE_bool(encoded, false, "When this option is on, the encoded image will be save in datum");
DEFINE_string(encode_type, "",
              "Optional: What type should we encode the image as ('png','jpg',...).");

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(
      "Convert a set of images to the leveldb/lmdb\n"
      "format used as input for Caffe.\n"
      "Usage:\n"
      "    convert_imageset [FLAGS] ROOTFOLDER/ LISTFILE DB_NAME\n"
      "LISTFILE lines are 'relative/path label'; DB_NAME must not exist.");
  crema::GlobalInit(&argc, &argv);
  if (argc != 4) {
    gflags::ShowUsageWithFlagsRestrict(argv[0], "tools/convert_imageset");
    return 1;
  }
  crema::ConvertImagesetOptions options;
  options.gray = FLAGS_gray;
  options.shuffle = FLAGS_shuffle;
  options.backend = FLAGS_backend;
  options.resize_width = FLAGS_resize_width;
  options.resize_height = FLAGS_resize_height;
  options.check_size = FLAGS_check_size;
  options.encoded = FLAGS_encoded;
  options.encode_type = FLAGS_encode_type;
  try {
    crema::ConvertImageset(argv[1], argv[2], argv[3], options);
    return 0;
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
}
