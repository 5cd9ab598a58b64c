// Converts images with Pascal VOC box annotations into an AnnotatedDatum
// database for SSD training, with the SSD fork's flags and record layout.
//   convert_annoset [FLAGS] ROOTFOLDER/ LISTFILE DB_NAME
#include <gflags/gflags.h>

#include "crema/common.hpp"
#include "crema/data/annotations.hpp"
#include "crema/data/converters/convert_imageset.hpp"

DEFINE_string(anno_type, "classification",
              "The annotation type: detection (VOC boxes); classification is convert_imageset's");
DEFINE_string(label_type, "xml",
              "The annotation files' format: xml (Pascal VOC) or txt (lines of 'name xmin ymin "
              "xmax ymax' in pixels)");
DEFINE_string(label_map_file, "", "The label map (class names and labels)");
DEFINE_bool(check_label, false, "Check that every class is in the label map (always done)");
DEFINE_int32(min_dim, 0, "Not supported: keep 0");
DEFINE_int32(max_dim, 0, "Not supported: keep 0");
DEFINE_bool(gray, false, "When this option is on, treat images as grayscale ones");
DEFINE_bool(shuffle, false, "Shuffle the order of the images (a fixed seed)");
DEFINE_string(backend, "lmdb", "The backend {lmdb, leveldb} for storing the result");
DEFINE_int32(resize_width, 0, "Width images are resized to");
DEFINE_int32(resize_height, 0, "Height images are resized to");
DEFINE_bool(check_size, false, "Check that all the images have the same size");
DEFINE_bool(encoded, false, "Store the image file (or its re-encoding) in the records");
DEFINE_string(encode_type, "", "Optional: the format to encode the images in ('png','jpg',...)");

namespace {

crema::ConvertImagesetOptions Options() {
  CREMA_REQUIRE(FLAGS_anno_type == "detection",
                "--anno_type=" << FLAGS_anno_type
                               << ": convert_annoset writes detection records (give "
                                  "--anno_type=detection); for class labels use convert_imageset");
  CREMA_REQUIRE(
      FLAGS_label_type == "xml" || FLAGS_label_type == "txt",
      "--label_type=" << FLAGS_label_type
                      << ": xml (Pascal VOC) and txt (name xmin ymin xmax ymax) are read");
  CREMA_REQUIRE(FLAGS_min_dim == 0 && FLAGS_max_dim == 0,
                "--min_dim and --max_dim are not supported; resize with --resize_width and "
                "--resize_height");
  CREMA_REQUIRE(!FLAGS_label_map_file.empty(), "give the label map with --label_map_file");
  crema::ConvertImagesetOptions options;
  options.labels = crema::ssd::LabelsByName(crema::ssd::ReadLabelMap(FLAGS_label_map_file));
  options.label_type = FLAGS_label_type;
  options.gray = FLAGS_gray;
  options.shuffle = FLAGS_shuffle;
  options.backend = FLAGS_backend;
  options.resize_width = FLAGS_resize_width;
  options.resize_height = FLAGS_resize_height;
  options.check_size = FLAGS_check_size;
  options.encoded = FLAGS_encoded;
  options.encode_type = FLAGS_encode_type;
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(
      "Convert images and their box annotations to an lmdb/leveldb of AnnotatedDatum.\n"
      "Usage:\n"
      "    convert_annoset [FLAGS] ROOTFOLDER/ LISTFILE DB_NAME\n"
      "LISTFILE lines are 'relative/image relative/annotation' (.xml, or .txt with\n"
      "--label_type=txt); DB_NAME must not exist.");
  crema::GlobalInit(&argc, &argv);
  if (argc != 4) {
    gflags::ShowUsageWithFlagsRestrict(argv[0], "tools/convert_annoset");
    return 1;
  }
  try {
    crema::ConvertAnnoset(argv[1], argv[2], argv[3], Options());
    return 0;
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
}
