// Image lists into Datum databases (Caffe's convert_imageset).
#include "crema/data/converters/convert_imageset.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "crema/common.hpp"

#ifdef CREMA_OPENCV
#include "crema/data/annotations.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/storage/partial_database.hpp"
#include "crema/util/db.hpp"
#include "crema/util/image_io.hpp"
#include "crema/util/thread_pool.hpp"
#endif

namespace crema {

namespace {

const char kListBlanks[] = " \t\r";

std::string WithoutTrailingBlanks(const std::string& text) {
  const size_t end = text.find_last_not_of(kListBlanks);
  return end == std::string::npos ? "" : text.substr(0, end + 1);
}

// A whole-text decimal integer in int's range, or false.
bool ParseListLabel(const std::string& text, int* label) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < INT_MIN || value > INT_MAX) return false;
  *label = static_cast<int>(value);
  return true;
}

// Uniform in [0, bound) from a Mersenne twister, whose output the standard
// fixes (unlike std::uniform_int_distribution's and std::shuffle's).
uint32_t UniformIndexBelow(std::mt19937* generator, uint32_t bound) {
  const uint32_t limit = UINT32_MAX - UINT32_MAX % bound;  // rejects the biased tail
  uint32_t draw;
  do {
    draw = static_cast<uint32_t>((*generator)());
  } while (draw >= limit);
  return draw % bound;
}

}  // namespace

namespace {

// The entries of a two-column list: each non-blank line split at its last
// blank into the image path and the second column, which `second` names
// ("label", "annotation file") in the error for a line without one; `set`
// reads the second column into the entry.
std::vector<ImageListEntry> ReadTwoColumnList(
    const std::string& list_file, const std::string& second,
    const std::function<void(const std::string& column, ImageListEntry* entry)>& set) {
  std::ifstream file(list_file);
  CREMA_REQUIRE(file.good(), list_file << ": cannot open the image list");
  std::vector<ImageListEntry> entries;
  std::string text;
  for (int line = 1; std::getline(file, text); ++line) {
    text = WithoutTrailingBlanks(text);
    if (text.empty()) continue;
    const size_t split = text.find_last_of(kListBlanks);
    CREMA_REQUIRE(split != std::string::npos,
                  list_file << ":" << line << ": '" << text << "' has no " << second
                            << " (a line is 'relative/path " << second << "')");
    ImageListEntry entry;
    entry.path = WithoutTrailingBlanks(text.substr(0, split));
    entry.line = line;
    const std::string column = text.substr(split + 1);
    CREMA_REQUIRE(!entry.path.empty(), list_file << ":" << line << ": no image path before the "
                                                 << second << " '" << column << "'");
    set(column, &entry);
    entries.push_back(entry);
  }
  CREMA_REQUIRE(!file.bad(), list_file << ": read error");
  return entries;
}

}  // namespace

std::vector<ImageListEntry> ReadImageList(const std::string& list_file) {
  return ReadTwoColumnList(
      list_file, "label", [&](const std::string& label, ImageListEntry* entry) {
        CREMA_REQUIRE(ParseListLabel(label, &entry->label),
                      list_file << ":" << entry->line << ": image '" << entry->path
                                << "': the label '" << label << "' is not an integer");
      });
}

std::vector<ImageListEntry> ReadAnnotatedList(const std::string& list_file) {
  return ReadTwoColumnList(
      list_file, "annotation file",
      [](const std::string& file, ImageListEntry* entry) { entry->annotation = file; });
}

void ShuffleImageList(std::vector<ImageListEntry>* entries, unsigned seed) {
  std::mt19937 generator(seed);
  for (size_t i = entries->size(); i > 1; --i) {  // Fisher-Yates
    const uint32_t j = UniformIndexBelow(&generator, static_cast<uint32_t>(i));
    std::swap((*entries)[i - 1], (*entries)[j]);
  }
}

#ifdef CREMA_OPENCV

namespace {

// How many records each database transaction holds, as in Caffe.
constexpr int kImagesPerCommit = 1000;

// The format an image is stored in: --encode_type, else (--encoded) the
// file's own, from its extension; "" stores raw pixels.
std::string EncodingOf(const std::string& path, const ConvertImagesetOptions& options) {
  if (!options.encode_type.empty()) return options.encode_type;
  if (!options.encoded) return "";
  const std::string extension = ImageExtension(path);
  CREMA_REQUIRE(!extension.empty(), "no extension to tell its format (give --encode_type)");
  return extension;
}

// One image read into a serialized Datum, or the message of why it was not.
struct ConvertedImage {
  std::string value;
  std::string error;
  int channels = 0, height = 0, width = 0;
};

// The image's Datum with its annotation's boxes. The boxes are normalised by
// the size the XML gives (the fork's rule, which holds through a resize);
// an XML without a size takes the image's, unresized.
void SerializeAnnotated(const std::string& root_folder, const ImageListEntry& entry,
                        const ConvertImagesetOptions& options, const Datum& datum,
                        std::string* value) {
  const std::string file = root_folder + entry.annotation;
  ssd::VocAnnotation annotation = options.label_type == "txt"
                                      ? ssd::ReadTextAnnotation(file, options.labels)
                                      : ssd::ReadVocAnnotation(file, options.labels);
  const bool resized = options.resize_height > 0;
  if (annotation.width == 0 || annotation.height == 0) {
    CREMA_REQUIRE(!resized, file << ": no image size (a text annotation, or an XML without "
                                    "<size>), and the image is resized: the boxes cannot be "
                                    "normalised");
    annotation.width = datum.width();
    annotation.height = datum.height();
  }
  ssd::RequireBoxesInside(annotation, file);
  CREMA_REQUIRE(
      resized || (annotation.width == datum.width() && annotation.height == datum.height()),
      file << ": <size> says " << annotation.width << " x " << annotation.height << ", the image '"
           << entry.path << "' is " << datum.width() << " x " << datum.height());
  AnnotatedDatum annotated;
  *annotated.mutable_datum() = datum;
  annotated.mutable_datum()->set_label(-1);
  ssd::SetAnnotations(annotation, annotation.width, annotation.height, &annotated);
  CREMA_REQUIRE(annotated.SerializeToString(value), "cannot serialize the record");
}

ConvertedImage ConvertOneImage(const std::string& root_folder, const ImageListEntry& entry,
                               const ConvertImagesetOptions& options) {
  ConvertedImage converted;
  try {
    Datum datum;
    const ImageColor color = options.gray ? ImageColor::kGray : ImageColor::kColor;
    ReadImageToDatum(root_folder + entry.path, entry.label, options.resize_height,
                     options.resize_width, color, EncodingOf(entry.path, options), &datum);
    converted.channels = datum.channels();
    converted.height = datum.height();
    converted.width = datum.width();
    if (entry.annotation.empty()) {
      CREMA_REQUIRE(datum.SerializeToString(&converted.value), "cannot serialize the record");
    } else {
      SerializeAnnotated(root_folder, entry, options, datum, &converted.value);
    }
  } catch (const Error& error) {
    converted.error = error.what();
  }
  return converted;
}

// Entries [begin, begin + size) decoded in parallel on the thread budget's
// pool; each result in its entry's place, so what is written (and the first
// bad line named) does not depend on the number of threads.
std::vector<ConvertedImage> ConvertBatch(const std::string& root_folder,
                                         const std::vector<ImageListEntry>& entries, int begin,
                                         int size, const ConvertImagesetOptions& options) {
  std::vector<ConvertedImage> batch(size);
  ThreadPool::Global().ParallelFor(size, 8, [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) {
      batch[i] = ConvertOneImage(root_folder, entries[begin + i], options);
    }
  });
  return batch;
}

// --check_size: every image has the first one's shape.
class SameSizeCheck {
 public:
  SameSizeCheck(bool enabled, const std::string& list_file)
      : enabled_(enabled), list_file_(list_file) {}
  void Check(const ImageListEntry& entry, const ConvertedImage& image) {
    if (!first_) {
      first_ = &entry;
      channels_ = image.channels, height_ = image.height, width_ = image.width;
      return;
    }
    CREMA_REQUIRE(
        !enabled_ ||
            (image.channels == channels_ && image.height == height_ && image.width == width_),
        list_file_ << ":" << entry.line << ": image '" << entry.path << "' is " << image.channels
                   << "x" << image.height << "x" << image.width << " but the first, '"
                   << first_->path << "' (line " << first_->line << "), is " << channels_ << "x"
                   << height_ << "x" << width_ << " (--check_size)");
  }

 private:
  const bool enabled_;
  const std::string list_file_;
  const ImageListEntry* first_ = nullptr;  // in the caller's list
  int channels_ = 0, height_ = 0, width_ = 0;
};

std::string FormatSeconds(double seconds) {
  const int whole = static_cast<int>(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof(text), "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60);
  return text;
}

// Caffe's "Processed N files." with the rate so far and the time left.
void LogConversionProgress(int done, int total, double seconds) {
  const double rate = seconds > 0 ? done / seconds : 0;
  LOG(INFO) << "Processed " << done << " files (" << static_cast<int>(rate) << " images/s, ETA "
            << FormatSeconds(rate > 0 ? (total - done) / rate : 0) << ").";
}

// The entries of a list into a new database (both tools' common part).
int ConvertEntries(const std::string& root_folder, const std::string& list_file,
                   std::vector<ImageListEntry> entries, const std::string& db_path,
                   const ConvertImagesetOptions& options) {
  std::string final_path = db_path;
  while (final_path.size() > 1 && final_path.back() == '/') final_path.pop_back();
  auto db = db::GetDB(options.backend);  // an unknown backend fails before any work
  // Caffe resizes only when both are positive: one alone, or a negative one,
  // would silently store the images at their own sizes.
  CREMA_REQUIRE(options.resize_height >= 0 && options.resize_width >= 0 &&
                    (options.resize_height == 0) == (options.resize_width == 0),
                "--resize_height " << options.resize_height << " and --resize_width "
                                   << options.resize_width
                                   << ": give both (positive) to resize, or neither");
  PartialDatabase partial(final_path);
  CREMA_REQUIRE(!entries.empty(), list_file << ": lists no images");
  if (options.shuffle) {
    LOG(INFO) << "Shuffling data";
    ShuffleImageList(&entries, options.shuffle_seed);
  }
  const int total = static_cast<int>(entries.size());
  LOG(INFO) << "A total of " << total << " images.";
  if (!options.encode_type.empty() && !options.encoded) {
    LOG(INFO) << "encode_type specified, assuming encoded=true.";
  }

  db->Open(partial.temporary_path(), db::NEW);
  const auto start = std::chrono::steady_clock::now();
  SameSizeCheck size_check(options.check_size, list_file);
  for (int begin = 0; begin < total; begin += kImagesPerCommit) {
    const int size = std::min(kImagesPerCommit, total - begin);
    const std::vector<ConvertedImage> batch =
        ConvertBatch(root_folder, entries, begin, size, options);
    auto txn = db->NewTransaction();
    for (int i = 0; i < size; ++i) {
      const ImageListEntry& entry = entries[begin + i];
      CREMA_REQUIRE(batch[i].error.empty(), list_file << ":" << entry.line << ": image '"
                                                      << entry.path << "': " << batch[i].error);
      size_check.Check(entry, batch[i]);
      char number[16];
      std::snprintf(number, sizeof(number), "%08d_", begin + i);  // Caffe's key
      txn->Put(number + entry.path, batch[i].value);
    }
    txn->Commit();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    LogConversionProgress(begin + size, total, seconds);
  }
  db->Close();
  partial.Publish();
  return total;
}

}  // namespace

int ConvertImageset(const std::string& root_folder, const std::string& list_file,
                    const std::string& db_path, const ConvertImagesetOptions& options) {
  return ConvertEntries(root_folder, list_file, ReadImageList(list_file), db_path, options);
}

int ConvertAnnoset(const std::string& root_folder, const std::string& list_file,
                   const std::string& db_path, const ConvertImagesetOptions& options) {
  CREMA_REQUIRE(!options.labels.empty(), "convert_annoset: give the label map (--label_map_file)");
  return ConvertEntries(root_folder, list_file, ReadAnnotatedList(list_file), db_path, options);
}

#endif  // CREMA_OPENCV

}  // namespace crema
