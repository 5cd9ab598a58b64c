// convert_imageset and compute_image_mean over images written with OpenCV:
// every record is checked against OpenCV's own decode of its file.
#ifdef CREMA_OPENCV

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <opencv2/core/core.hpp>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <opencv2/imgproc/imgproc.hpp>
#include <string>
#include <utility>
#include <vector>

#include "crema/data/converters/compute_image_mean.hpp"
#include "crema/data/converters/convert_imageset.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/db.hpp"
#include "crema/util/image_io.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

std::string FileBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// OpenCV's interleaved rows (HWC) as a Datum's planes (CHW), written out here
// rather than through CVMatToDatum so the two are checked against each other.
std::string Planes(const cv::Mat& image) {
  const int channels = image.channels();
  std::string planes(static_cast<size_t>(channels) * image.rows * image.cols, '\0');
  for (int c = 0; c < channels; ++c) {
    for (int h = 0; h < image.rows; ++h) {
      for (int w = 0; w < image.cols; ++w) {
        planes[(static_cast<size_t>(c) * image.rows + h) * image.cols + w] =
            static_cast<char>(image.ptr<uint8_t>(h)[w * channels + c]);
      }
    }
  }
  return planes;
}

// A colour image whose pixels depend on the seed, so images differ.
cv::Mat ColourImage(int height, int width, int seed) {
  cv::Mat image(height, width, CV_8UC3);
  for (int h = 0; h < height; ++h) {
    for (int w = 0; w < width; ++w) {
      image.at<cv::Vec3b>(h, w) = cv::Vec3b(static_cast<uint8_t>(seed * 37 + h * 11 + w * 3),
                                            static_cast<uint8_t>(seed * 5 + h * 29),
                                            static_cast<uint8_t>(255 - seed * 13 - w * 17));
    }
  }
  return image;
}

cv::Mat GreyImage(int height, int width, int seed) {
  cv::Mat image(height, width, CV_8UC1);
  for (int h = 0; h < height; ++h) {
    for (int w = 0; w < width; ++w) image.at<uint8_t>(h, w) = static_cast<uint8_t>(seed + h * w);
  }
  return image;
}

struct Record {
  std::string key;
  Datum datum;
};

std::vector<Record> ReadRecords(const std::string& path, const std::string& backend = "lmdb") {
  auto db = db::GetDB(backend);
  db->Open(path, db::READ);
  std::vector<Record> records;
  for (auto cursor = db->NewCursor(); cursor->valid(); cursor->Next()) {
    Record record;
    record.key = cursor->key();
    EXPECT_TRUE(record.datum.ParseFromString(cursor->value())) << record.key;
    records.push_back(record);
  }
  return records;
}

class ConvertImagesetTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    root_ = dir_ + "/images/";
    std::filesystem::create_directories(root_ + "sub dir");
    list_ = dir_ + "/list.txt";
    db_ = dir_ + "/db";
  }

  // Writes the image under the root folder; returns its full path.
  std::string WriteImage(const std::string& relative, const cv::Mat& image) {
    const std::string path = root_ + relative;
    EXPECT_TRUE(cv::imwrite(path, image)) << path;
    return path;
  }

  void WriteList(const std::string& contents) { std::ofstream(list_) << contents; }

  // The images of the usual list: colour PNG, grey PNG, colour JPEG (in a
  // folder whose name has a space), each of its own size.
  void WriteMixedImages() {
    WriteImage("a.png", ColourImage(5, 4, 1));
    WriteImage("b.png", GreyImage(6, 7, 2));
    WriteImage("sub dir/c.jpg", ColourImage(9, 8, 3));
    WriteList("a.png 3\nb.png 0\nsub dir/c.jpg 7\n");
  }

  // Whatever is left in the scratch folder beside the list and the images.
  std::vector<std::string> LeftOver() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (name != "images" && name != "list.txt") names.push_back(name);
    }
    return names;
  }

  std::string root_, list_, db_;
};

const std::vector<std::pair<std::string, int>> kMixedList = {
    {"a.png", 3}, {"b.png", 0}, {"sub dir/c.jpg", 7}};

TEST_F(ConvertImagesetTest, RawRecordsHoldOpenCVsColourDecode) {
  WriteMixedImages();
  EXPECT_EQ(ConvertImageset(root_, list_, db_, ConvertImagesetOptions()), 3);
  const std::vector<Record> records = ReadRecords(db_);
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string& path = kMixedList[i].first;
    char key[16];
    std::snprintf(key, sizeof(key), "%08d_", static_cast<int>(i));
    EXPECT_EQ(records[i].key, key + path);
    const Datum& datum = records[i].datum;
    // As in Caffe, without --gray every image is read as colour (a grey one too).
    const cv::Mat expected = cv::imread(root_ + path, cv::IMREAD_COLOR);
    EXPECT_FALSE(datum.encoded());
    EXPECT_EQ(datum.label(), kMixedList[i].second);
    EXPECT_EQ(datum.channels(), 3);
    EXPECT_EQ(datum.height(), expected.rows);
    EXPECT_EQ(datum.width(), expected.cols);
    EXPECT_TRUE(datum.data() == Planes(expected)) << path;
  }
  EXPECT_EQ(LeftOver(), std::vector<std::string>{"db"});
}

TEST_F(ConvertImagesetTest, EncodedKeepsTheFilesBytes) {
  WriteMixedImages();
  ConvertImagesetOptions options;
  options.encoded = true;
  ConvertImageset(root_, list_, db_, options);
  const std::vector<Record> records = ReadRecords(db_);
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string file = root_ + kMixedList[i].first;
    const Datum& datum = records[i].datum;
    EXPECT_TRUE(datum.encoded());
    EXPECT_EQ(datum.label(), kMixedList[i].second);
    const cv::Mat expected = cv::imread(file, cv::IMREAD_COLOR);
    const cv::Mat decoded = DecodeDatumToCVMat(datum, ImageColor::kAsStored, records[i].key);
    EXPECT_EQ(datum.channels(), 3);
    EXPECT_EQ(datum.height(), expected.rows);
    EXPECT_EQ(datum.width(), expected.cols);
    EXPECT_TRUE(Planes(decoded) == Planes(expected)) << file;
    if (i == 1) {
      // The grey PNG asked for as colour is stored re-encoded (losslessly) as a colour PNG.
      EXPECT_EQ(decoded.channels(), 3);
      EXPECT_EQ(datum.data().substr(1, 3), "PNG");
    } else {
      EXPECT_TRUE(datum.data() == FileBytes(file)) << file;  // not re-encoded
    }
  }
}

TEST_F(ConvertImagesetTest, EncodeTypeReencodesAndImpliesEncoded) {
  WriteMixedImages();
  ConvertImagesetOptions options;
  options.encode_type = "png";
  ConvertImageset(root_, list_, db_, options);
  const std::vector<Record> records = ReadRecords(db_);
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) {
    const Datum& datum = records[i].datum;
    const std::string file = root_ + kMixedList[i].first;
    EXPECT_TRUE(datum.encoded());
    EXPECT_EQ(datum.data().substr(1, 3), "PNG") << file;
    const cv::Mat decoded = DecodeDatumToCVMat(datum, ImageColor::kAsStored, records[i].key);
    // PNG is lossless: the JPEG's decoded pixels survive exactly.
    EXPECT_TRUE(Planes(decoded) == Planes(cv::imread(file, cv::IMREAD_COLOR))) << file;
  }
  EXPECT_TRUE(records[0].datum.data() == FileBytes(root_ + "a.png"));  // already a PNG
}

TEST_F(ConvertImagesetTest, GrayStoresOneChannel) {
  WriteMixedImages();
  ConvertImagesetOptions options;
  options.gray = true;
  ConvertImageset(root_, list_, db_, options);
  std::vector<Record> records = ReadRecords(db_);
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) {
    const cv::Mat expected = cv::imread(root_ + kMixedList[i].first, cv::IMREAD_GRAYSCALE);
    EXPECT_EQ(records[i].datum.channels(), 1);
    EXPECT_TRUE(records[i].datum.data() == Planes(expected)) << kMixedList[i].first;
  }

  options.encoded = true;
  ConvertImageset(root_, list_, dir_ + "/encoded", options);
  records = ReadRecords(dir_ + "/encoded");
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string file = root_ + kMixedList[i].first;
    const cv::Mat decoded =
        DecodeDatumToCVMat(records[i].datum, ImageColor::kAsStored, records[i].key);
    EXPECT_EQ(records[i].datum.channels(), 1);
    EXPECT_EQ(decoded.channels(), 1) << file;
    if (i != 2) {  // PNGs: lossless
      EXPECT_TRUE(Planes(decoded) == Planes(cv::imread(file, cv::IMREAD_GRAYSCALE))) << file;
    }
  }
  // The grey PNG is stored as it is; the colour ones are re-encoded in grey.
  EXPECT_TRUE(records[1].datum.data() == FileBytes(root_ + "b.png"));
  EXPECT_FALSE(records[2].datum.data() == FileBytes(root_ + "sub dir/c.jpg"));
}

TEST_F(ConvertImagesetTest, ResizeGivesTheAskedSize) {
  WriteMixedImages();
  ConvertImagesetOptions options;
  options.resize_height = 7;
  options.resize_width = 5;
  options.check_size = true;  // every image resized alike passes
  ConvertImageset(root_, list_, db_, options);
  const std::vector<Record> records = ReadRecords(db_);
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) {
    cv::Mat expected;
    cv::resize(cv::imread(root_ + kMixedList[i].first, cv::IMREAD_COLOR), expected, cv::Size(5, 7));
    EXPECT_EQ(records[i].datum.height(), 7);
    EXPECT_EQ(records[i].datum.width(), 5);
    EXPECT_TRUE(records[i].datum.data() == Planes(expected)) << kMixedList[i].first;
  }
}

TEST_F(ConvertImagesetTest, ShuffleIsTheSamePermutationEveryRun) {
  std::string list;
  for (int i = 0; i < 30; ++i) {
    const std::string name = "g" + std::to_string(i) + ".png";
    WriteImage(name, GreyImage(3, 3, i));
    list += name + " " + std::to_string(i) + "\n";
  }
  WriteList(list);
  ConvertImagesetOptions options;
  options.gray = true;
  options.shuffle = true;
  ConvertImageset(root_, list_, dir_ + "/first", options);
  ConvertImageset(root_, list_, dir_ + "/second", options);
  const std::vector<Record> first = ReadRecords(dir_ + "/first");
  const std::vector<Record> second = ReadRecords(dir_ + "/second");
  ASSERT_EQ(first.size(), 30u);
  ASSERT_EQ(second.size(), 30u);
  std::vector<int> labels;
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].key, second[i].key);
    const int label = first[i].datum.label();
    char key[32];
    std::snprintf(key, sizeof(key), "%08d_g%d.png", static_cast<int>(i), label);
    EXPECT_EQ(first[i].key, key);  // the key's number is the shuffled position
    EXPECT_TRUE(first[i].datum.data() == Planes(GreyImage(3, 3, label)));
    labels.push_back(label);
  }
  std::vector<int> sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 30; ++i) EXPECT_EQ(sorted[i], i);        // a permutation
  EXPECT_FALSE(std::is_sorted(labels.begin(), labels.end()));  // and not the list's order
}

TEST_F(ConvertImagesetTest, CheckSizeNamesTheImageThatDiffers) {
  WriteMixedImages();
  ConvertImagesetOptions options;
  options.check_size = true;
  const std::string message = ErrorMessageOf([&] { ConvertImageset(root_, list_, db_, options); });
  EXPECT_NE(message.find(list_ + ":2:"), std::string::npos) << message;
  EXPECT_NE(message.find("b.png"), std::string::npos) << message;
  EXPECT_NE(message.find("a.png"), std::string::npos) << message;  // the first, compared with
  EXPECT_NE(message.find("check_size"), std::string::npos) << message;
  EXPECT_TRUE(LeftOver().empty());
}

TEST_F(ConvertImagesetTest, MissingImageNamesListLineAndFileAndLeavesNoDatabase) {
  // More images than one commit holds, so a committed batch exists when the
  // missing one is found.
  std::string list;
  for (int i = 0; i < 1005; ++i) list += "a.png 1\n";
  list += "missing.png 2\n";
  WriteImage("a.png", ColourImage(2, 2, 0));
  WriteList(list);
  const std::string message =
      ErrorMessageOf([&] { ConvertImageset(root_, list_, db_, ConvertImagesetOptions()); });
  EXPECT_NE(message.find(list_ + ":1006:"), std::string::npos) << message;
  EXPECT_NE(message.find(root_ + "missing.png"), std::string::npos) << message;
  EXPECT_TRUE(LeftOver().empty());
}

TEST_F(ConvertImagesetTest, UnreadableImageIsNamed) {
  std::ofstream(root_ + "broken.png") << "not a png";
  WriteList("broken.png 1\n");
  const std::string message =
      ErrorMessageOf([&] { ConvertImageset(root_, list_, db_, ConvertImagesetOptions()); });
  EXPECT_NE(message.find(list_ + ":1:"), std::string::npos) << message;
  EXPECT_NE(message.find("broken.png"), std::string::npos) << message;
  EXPECT_TRUE(LeftOver().empty());
}

TEST_F(ConvertImagesetTest, MalformedLinesAreErrorsNamingTheLine) {
  WriteImage("a.png", ColourImage(2, 2, 0));
  WriteList("a.png 1\na.png\n");
  std::string message =
      ErrorMessageOf([&] { ConvertImageset(root_, list_, db_, ConvertImagesetOptions()); });
  EXPECT_NE(message.find(list_ + ":2:"), std::string::npos) << message;
  EXPECT_NE(message.find("no label"), std::string::npos) << message;
  EXPECT_TRUE(LeftOver().empty());

  WriteList("a.png 1\n\na.png cat\n");
  message = ErrorMessageOf([&] { ConvertImageset(root_, list_, db_, ConvertImagesetOptions()); });
  EXPECT_NE(message.find(list_ + ":3:"), std::string::npos) << message;
  EXPECT_NE(message.find("'cat' is not an integer"), std::string::npos) << message;
  EXPECT_TRUE(LeftOver().empty());
}

TEST_F(ConvertImagesetTest, ExistingDatabaseIsRefused) {
  WriteMixedImages();
  std::filesystem::create_directory(db_);
  const std::string message =
      ErrorMessageOf([&] { ConvertImageset(root_, list_, db_, ConvertImagesetOptions()); });
  EXPECT_NE(message.find(db_ + ": already exists"), std::string::npos) << message;
  EXPECT_EQ(LeftOver(), std::vector<std::string>{"db"});
  EXPECT_TRUE(std::filesystem::is_empty(db_));
}

TEST_F(ConvertImagesetTest, EncodedImageWithoutExtensionAsksForEncodeType) {
  WriteImage("a.png", ColourImage(2, 2, 0));
  std::filesystem::rename(root_ + "a.png", root_ + "noextension");
  WriteList("noextension 1\n");
  ConvertImagesetOptions options;
  options.encoded = true;
  const std::string message = ErrorMessageOf([&] { ConvertImageset(root_, list_, db_, options); });
  EXPECT_NE(message.find(list_ + ":1: image 'noextension': no extension"), std::string::npos)
      << message;
  EXPECT_TRUE(LeftOver().empty());
  options.encode_type = "png";
  ConvertImageset(root_, list_, db_, options);
  const Datum datum = ReadRecords(db_)[0].datum;
  EXPECT_EQ(datum.data().substr(1, 3), "PNG");
  EXPECT_TRUE(Planes(DecodeDatumToCVMat(datum, ImageColor::kAsStored, "record")) ==
              Planes(ColourImage(2, 2, 0)));
}

TEST_F(ConvertImagesetTest, RecordsDoNotDependOnTheThreadBudget) {
  std::string list;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "t" + std::to_string(i) + ".jpg";
    WriteImage(name, ColourImage(4 + i % 3, 5, i));
    list += name + " " + std::to_string(i % 10) + "\n";
  }
  WriteList(list);
  ConvertImagesetOptions options;
  options.resize_height = 6;
  options.resize_width = 6;
  options.encode_type = "png";
  {
    ScopedThreadBudget one(1);
    ConvertImageset(root_, list_, dir_ + "/one", options);
  }
  {
    ScopedThreadBudget three(3);
    ConvertImageset(root_, list_, dir_ + "/three", options);
  }
  const std::vector<Record> one = ReadRecords(dir_ + "/one");
  const std::vector<Record> three = ReadRecords(dir_ + "/three");
  ASSERT_EQ(one.size(), 40u);
  ASSERT_EQ(three.size(), 40u);
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].key, three[i].key);
    EXPECT_EQ(one[i].datum.SerializeAsString(), three[i].datum.SerializeAsString()) << i;
  }
}

TEST_F(ConvertImagesetTest, LevelDBHoldsTheSameRecords) {
  WriteMixedImages();
  ConvertImagesetOptions options;
  ConvertImageset(root_, list_, db_, options);
  options.backend = "leveldb";
  ConvertImageset(root_, list_, dir_ + "/leveldb", options);
  const std::vector<Record> lmdb = ReadRecords(db_);
  const std::vector<Record> leveldb = ReadRecords(dir_ + "/leveldb", "leveldb");
  ASSERT_EQ(lmdb.size(), leveldb.size());
  for (size_t i = 0; i < lmdb.size(); ++i) {
    EXPECT_EQ(lmdb[i].key, leveldb[i].key);
    EXPECT_EQ(lmdb[i].datum.SerializeAsString(), leveldb[i].datum.SerializeAsString());
  }
}

TEST_F(ConvertImagesetTest, ListPathsMayHoldSpacesAndLinesMayEndInCarriageReturns) {
  WriteList("my image.png 4\r\n\r\n  \nfolder/x y.jpg\t-2 \n");
  const std::vector<ImageListEntry> entries = ReadImageList(list_);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].path, "my image.png");
  EXPECT_EQ(entries[0].label, 4);
  EXPECT_EQ(entries[0].line, 1);
  EXPECT_EQ(entries[1].path, "folder/x y.jpg");
  EXPECT_EQ(entries[1].label, -2);
  EXPECT_EQ(entries[1].line, 4);
}

// Caffe resizes only when both sizes are positive: one alone, or a negative
// one, stored the images at their own sizes without a word.
TEST_F(ConvertImagesetTest, ResizeNeedsBothSizesOrNeither) {
  WriteMixedImages();
  for (const auto& [height, width] : {std::pair{4, 0}, std::pair{0, 4}, std::pair{-4, 4}}) {
    ConvertImagesetOptions options;
    options.resize_height = height;
    options.resize_width = width;
    const std::string message =
        ErrorMessageOf([&] { ConvertImageset(root_, list_, db_, options); });
    EXPECT_NE(message.find("--resize_height " + std::to_string(height) + " and --resize_width " +
                           std::to_string(width)),
              std::string::npos)
        << message;
    EXPECT_TRUE(LeftOver().empty());
  }
}

class ComputeImageMeanTest : public ConvertImagesetTest {};

// A record's negative size made a size_t product of exabytes (an allocation
// failure that is no crema::Error); it is named by its key instead.
TEST_F(ComputeImageMeanTest, RecordWithANegativeSizeIsNamed) {
  auto db = db::GetDB("lmdb");
  db->Open(db_, db::NEW);
  auto txn = db->NewTransaction();
  Datum datum;
  datum.set_channels(-1);
  datum.set_height(2);
  datum.set_width(2);
  datum.set_data(std::string(4, '\0'));
  txn->Put("bad_record", datum.SerializeAsString());
  txn->Commit();
  db->Close();
  const std::string message = ErrorMessageOf([&] { ComputeImageMean(db_, "lmdb"); });
  EXPECT_NE(message.find("record 'bad_record' is -1x2x2"), std::string::npos) << message;
}

TEST_F(ComputeImageMeanTest, EncodedAndRawRecordsGiveTheSameMean) {
  std::string list;
  for (int i = 0; i < 4; ++i) {
    WriteImage("m" + std::to_string(i) + ".png", ColourImage(3, 2, i));
    list += "m" + std::to_string(i) + ".png " + std::to_string(i) + "\n";
  }
  WriteList(list);
  ConvertImagesetOptions options;
  ConvertImageset(root_, list_, dir_ + "/raw", options);
  options.encoded = true;
  ConvertImageset(root_, list_, dir_ + "/encoded", options);
  const BlobProto raw = ComputeImageMean(dir_ + "/raw", "lmdb");
  const BlobProto encoded = ComputeImageMean(dir_ + "/encoded", "lmdb");
  EXPECT_EQ(raw.num(), 1);
  EXPECT_EQ(raw.channels(), 3);
  EXPECT_EQ(raw.height(), 3);
  EXPECT_EQ(raw.width(), 2);
  ASSERT_EQ(raw.data_size(), 18);
  EXPECT_EQ(raw.SerializeAsString(), encoded.SerializeAsString());
  std::vector<double> sums(18, 0.0);
  for (int i = 0; i < 4; ++i) {
    const std::string planes = Planes(ColourImage(3, 2, i));
    for (int p = 0; p < 18; ++p) sums[p] += static_cast<uint8_t>(planes[p]);
  }
  for (int p = 0; p < 18; ++p) EXPECT_FLOAT_EQ(raw.data(p), sums[p] / 4) << p;
  const std::vector<double> channels = ChannelMeans(raw);
  ASSERT_EQ(channels.size(), 3u);
  EXPECT_NEAR(channels[0], (sums[0] + sums[1] + sums[2] + sums[3] + sums[4] + sums[5]) / 24, 1e-5);
}

TEST_F(ComputeImageMeanTest, RecordsOfAnotherShapeAreNamed) {
  WriteDatumLMDB(
      db_, 2, 2, 2, [](int, int p) { return p; }, [](int i) { return i; });
  EXPECT_EQ(ComputeImageMean(db_, "lmdb").data(3), 3.0f);
  WriteImage("a.png", ColourImage(2, 2, 0));
  WriteImage("b.png", ColourImage(3, 2, 0));
  WriteList("a.png 0\nb.png 1\n");
  ConvertImagesetOptions options;
  options.encoded = true;
  ConvertImageset(root_, list_, dir_ + "/mixed", options);
  const std::string message = ErrorMessageOf([&] { ComputeImageMean(dir_ + "/mixed", "lmdb"); });
  EXPECT_NE(message.find("00000001_b.png"), std::string::npos) << message;
}

}  // namespace
}  // namespace crema

#endif  // CREMA_OPENCV
