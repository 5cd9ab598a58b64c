// Converts a folder of images listed in a text file ("relative/path label"
// per line) into an LMDB or LevelDB database of Datum records, as Caffe's
// convert_imageset does: keys "%08d_<path>" in list order, raw pixels
// (channels x height x width, BGR) or the encoded image. The list parser
// needs no OpenCV; the conversion is built with OpenCV (CREMA_OPENCV).
#ifndef CREMA_DATA_CONVERTERS_CONVERT_IMAGESET_HPP_
#define CREMA_DATA_CONVERTERS_CONVERT_IMAGESET_HPP_

#include <map>
#include <string>
#include <vector>

namespace crema {

// One line of an image list: the path (which may hold spaces: the label is
// the text after the last space or tab) and its label.
struct ImageListEntry {
  std::string path;
  int label = 0;
  int line = 0;  // 1-based line in the list file, for messages
  // An annotated list's second column (convert_annoset): the annotation
  // file, relative to the root folder as the image is.
  std::string annotation;
};

// Reads a list file. Blank lines are skipped; a line without a label, or
// whose label is not an integer, is a user error naming the file and line.
std::vector<ImageListEntry> ReadImageList(const std::string& list_file);

// Reorders the entries with a fixed-seed generator of its own, so the same
// list and seed give the same order on every run and platform.
void ShuffleImageList(std::vector<ImageListEntry>* entries, unsigned seed);

// Caffe's flags, with Caffe's defaults.
struct ConvertImagesetOptions {
  bool gray = false;          // one grey channel instead of three (BGR)
  bool shuffle = false;       // store the images in a shuffled order (fixed seed)
  unsigned shuffle_seed = 1;  // the order --shuffle gives
  std::string backend = "lmdb";
  int resize_width = 0;  // both positive: resize every image (bilinear)
  int resize_height = 0;
  bool check_size = false;  // every image must have the first one's size
  bool encoded = false;     // store the image file (or its re-encoding)
  // "" keeps each file's own format; "png", "jpg", ... re-encode (implies
  // encoded, as in Caffe).
  std::string encode_type;
  // convert_annoset: class name to label; the records are AnnotatedDatums.
  std::map<std::string, int> labels;
  // convert_annoset: the annotation files' form, "xml" (Pascal VOC) or
  // "txt" (lines of "name xmin ymin xmax ymax" in pixels).
  std::string label_type = "xml";
};

// Reads an annotated list (SSD's convert_annoset): "image annotation" per
// line, paths relative to the root folder, split at the last blank.
std::vector<ImageListEntry> ReadAnnotatedList(const std::string& list_file);

#ifdef CREMA_OPENCV
// Converts the images of `list_file`, relative to `root_folder` (joined as
// given, as in Caffe: end it with '/'), into a new database `db_path`. An
// existing db_path, a malformed list line and an image that is missing or
// does not decode are user errors naming the list file, the line and the
// image; the database is written under a temporary name beside db_path and
// takes its name only when complete, so a failed run leaves nothing there.
// Returns the number of images written.
int ConvertImageset(const std::string& root_folder, const std::string& list_file,
                    const std::string& db_path, const ConvertImagesetOptions& options);

// SSD's convert_annoset for detection: the images of an annotated list, each
// with its Pascal VOC XML boxes, into AnnotatedDatum records (the fork's
// layout: boxes normalised by the <size> the XML gives, grouped by label),
// keys and options as ConvertImageset's; options.labels from the label map.
// An object of a class the map lacks, a box out of order or outside its
// image, and an XML size that differs from the image's are errors naming
// the list line and the file. Returns the number of images written.
int ConvertAnnoset(const std::string& root_folder, const std::string& list_file,
                   const std::string& db_path, const ConvertImagesetOptions& options);
#endif  // CREMA_OPENCV

}  // namespace crema

#endif  // CREMA_DATA_CONVERTERS_CONVERT_IMAGESET_HPP_
