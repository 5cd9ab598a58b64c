// convert_annoset and the annotation readers: VOC XML boxes into the SSD
// fork's AnnotatedDatum records (normalised, grouped by label), a record
// written by hand with the fork's field numbers decoding, and every bad
// input named: boxes out of order or outside the image, unknown classes,
// label maps with duplicates, malformed XML, sizes that disagree.
#ifdef CREMA_OPENCV

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <opencv2/core/core.hpp>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <string>
#include <vector>

#include "crema/data/annotations.hpp"
#include "crema/data/converters/convert_imageset.hpp"
#include "crema/util/db.hpp"
#include "test_error_message.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

const char kLabelMap[] =
    "item { name: 'none_of_the_above' label: 0 display_name: 'background' }\n"
    "item { name: 'circle' label: 1 }\nitem { name: 'square' label: 2 }\n";

std::string Voc(int width, int height, const std::string& objects) {
  return "<annotation><filename>x.jpg</filename><size><width>" + std::to_string(width) +
         "</width><height>" + std::to_string(height) + "</height><depth>3</depth></size>" +
         objects + "</annotation>";
}

std::string Object(const std::string& name, int x0, int y0, int x1, int y1, int difficult = 0) {
  return "<object><name>" + name + "</name><difficult>" + std::to_string(difficult) +
         "</difficult><bndbox><xmin>" + std::to_string(x0) + "</xmin><ymin>" + std::to_string(y0) +
         "</ymin><xmax>" + std::to_string(x1) + "</xmax><ymax>" + std::to_string(y1) +
         "</ymax></bndbox></object>";
}

class ConvertAnnosetTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    root_ = dir_ + "/set/";
    std::filesystem::create_directories(root_);
    Write(dir_ + "/labelmap.prototxt", kLabelMap);
    options_.labels = ssd::LabelsByName(ssd::ReadLabelMap(dir_ + "/labelmap.prototxt"));
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  void Image(const std::string& name, int width, int height) {
    cv::Mat image(height, width, CV_8UC3, cv::Scalar(10, 20, 30));
    ASSERT_TRUE(cv::imwrite(root_ + name, image));
  }
  std::vector<AnnotatedDatum> Records() {
    auto db = db::GetDB("lmdb");
    db->Open(dir_ + "/db", db::READ);
    std::vector<AnnotatedDatum> records;
    for (auto cursor = db->NewCursor(); cursor->valid(); cursor->Next()) {
      records.emplace_back();
      EXPECT_TRUE(records.back().ParseFromString(cursor->value()));
    }
    return records;
  }
  std::string Convert(const std::string& list) {
    Write(dir_ + "/list.txt", list);
    return ErrorMessageOf(
        [&] { ConvertAnnoset(root_, dir_ + "/list.txt", dir_ + "/db", options_); });
  }
  std::string root_;
  ConvertImagesetOptions options_;
};

TEST_F(ConvertAnnosetTest, BoxesAreNormalisedAndGroupedByLabel) {
  Image("a.png", 40, 20);
  Write(root_ + "a.xml", Voc(40, 20,
                             Object("square", 4, 2, 20, 10) + Object("circle", 0, 0, 40, 20) +
                                 Object("square", 10, 5, 30, 15, 1)));
  Image("b.png", 8, 8);
  Write(root_ + "b.xml", Voc(8, 8, ""));  // no objects: all background, kept
  ASSERT_EQ(Convert("a.png a.xml\nb.png b.xml\n"), "");
  const std::vector<AnnotatedDatum> records = Records();
  ASSERT_EQ(records.size(), 2u);
  const AnnotatedDatum& a = records[0];
  EXPECT_EQ(a.type(), AnnotatedDatum::BBOX);
  EXPECT_EQ(a.datum().width(), 40);
  EXPECT_EQ(a.datum().height(), 20);
  EXPECT_EQ(a.datum().label(), -1);
  ASSERT_EQ(a.annotation_group_size(), 2);
  EXPECT_EQ(a.annotation_group(0).group_label(), 1);
  EXPECT_EQ(a.annotation_group(1).group_label(), 2);
  ASSERT_EQ(a.annotation_group(1).annotation_size(), 2);
  const Annotation& second = a.annotation_group(1).annotation(1);
  EXPECT_EQ(second.instance_id(), 1);
  EXPECT_FLOAT_EQ(second.bbox().xmin(), 10.f / 40);
  EXPECT_FLOAT_EQ(second.bbox().ymin(), 5.f / 20);
  EXPECT_FLOAT_EQ(second.bbox().xmax(), 30.f / 40);
  EXPECT_FLOAT_EQ(second.bbox().ymax(), 15.f / 20);
  EXPECT_TRUE(second.bbox().difficult());
  EXPECT_EQ(records[1].annotation_group_size(), 0);
}

// The bytes a fork-written record would hold, field by field (AnnotatedDatum:
// datum 1, type 2, annotation_group 3; AnnotationGroup: group_label 1,
// annotation 2; Annotation: instance_id 1, bbox 2; NormalizedBBox: xmin 1 ..
// ymax 4 as 32-bit floats, difficult 6).
TEST(AnnotatedDatumTest, AForkWrittenRecordDecodes) {
  const auto f32 = [](float value) {
    std::string bytes(4, '\0');
    std::memcpy(&bytes[0], &value, 4);
    return bytes;
  };
  const std::string bbox = "\x0d" + f32(0.25f) + "\x15" + f32(0.5f) + "\x1d" + f32(0.75f) + "\x25" +
                           f32(1.0f) + std::string("\x30\x01", 2);
  const std::string annotation = std::string("\x08\x03\x12", 3) + char(bbox.size()) + bbox;
  const std::string group = std::string("\x08\x07\x12", 3) + char(annotation.size()) + annotation;
  const std::string datum = std::string("\x08\x03\x10\x02\x18\x02", 6);  // channels 3, 2 x 2
  const std::string record = std::string("\x0a", 1) + char(datum.size()) + datum +
                             std::string("\x10\x00", 2) + "\x1a" + char(group.size()) + group;
  AnnotatedDatum decoded;
  ASSERT_TRUE(decoded.ParseFromString(record));
  EXPECT_EQ(decoded.datum().channels(), 3);
  EXPECT_EQ(decoded.type(), AnnotatedDatum::BBOX);
  ASSERT_EQ(decoded.annotation_group_size(), 1);
  EXPECT_EQ(decoded.annotation_group(0).group_label(), 7);
  const Annotation& only = decoded.annotation_group(0).annotation(0);
  EXPECT_EQ(only.instance_id(), 3);
  EXPECT_FLOAT_EQ(only.bbox().xmin(), 0.25f);
  EXPECT_FLOAT_EQ(only.bbox().ymax(), 1.0f);
  EXPECT_TRUE(only.bbox().difficult());
}

TEST_F(ConvertAnnosetTest, BadAnnotationsAreNamedAndLeaveNoDatabase) {
  Image("a.png", 40, 20);
  const std::string xml = root_ + "a.xml";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Voc(40, 20, Object("square", 4, 2, 50, 10)),
       "object 1 ('square'): the box (4, 2, 50, 10) "
       "leaves the 40 x 20 image"},
      {Voc(40, 20, Object("circle", 30, 2, 20, 10)), "the box (30, 2, 20, 10) has a minimum above"},
      {Voc(40, 20, Object("circle", 0, 0, 4, 4) + Object("hexagon", 0, 0, 4, 4)),
       "object 2: the class 'hexagon' is not in the label map"},
      {"<annotation><size><width>40</width>", "a.xml:1: not well-formed XML"},
      {Voc(41, 20, ""), "<size> says 41 x 20, the image 'a.png' is 40 x 20"},
  };
  for (const auto& [text, expected] : cases) {
    Write(xml, text);
    const std::string message = Convert("a.png a.xml\n");
    EXPECT_NE(message.find("list.txt:1: image 'a.png'"), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << expected << "\n" << message;
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/db"));
  }
}

// The fork's text form (--label_type=txt): "name xmin ymin xmax ymax" per
// line, in pixels of the image, whose own size normalises them.
TEST_F(ConvertAnnosetTest, TextAnnotationsAreReadAndCheckedAsXml) {
  options_.label_type = "txt";
  Image("a.png", 40, 20);
  Write(root_ + "a.txt", "square 4 2 20 10\n\ncircle 0 0 40 20\n");
  ASSERT_EQ(Convert("a.png a.txt\n"), "");
  const std::vector<AnnotatedDatum> records = Records();
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].annotation_group_size(), 2);
  EXPECT_EQ(records[0].annotation_group(1).group_label(), 2);
  const NormalizedBBox& square = records[0].annotation_group(1).annotation(0).bbox();
  EXPECT_FLOAT_EQ(square.xmin(), 4.f / 40);
  EXPECT_FLOAT_EQ(square.ymax(), 10.f / 20);
  EXPECT_FALSE(square.difficult());
  std::filesystem::remove_all(dir_ + "/db");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"square 4 2 50 10\n", "a.txt: object 1: the box (4, 2, 50, 10) leaves the 40 x 20 image"},
      {"circle 30 2 20 10\n", "a.txt:1 ('circle'): the box (30, 2, 20, 10) has a minimum above"},
      {"circle 0 0 4 4\nhexagon 0 0 4 4\n", "a.txt:2: the class 'hexagon' is not in the label map"},
      {"circle 0 0 4\n", "a.txt:1: expected 'name xmin ymin xmax ymax', got 'circle 0 0 4'"},
      {"circle 0 0 4 4 1\n", "a.txt:1: expected 'name xmin ymin xmax ymax'"},
  };
  for (const auto& [text, expected] : cases) {
    Write(root_ + "a.txt", text);
    const std::string message = Convert("a.png a.txt\n");
    EXPECT_NE(message.find(expected), std::string::npos) << expected << "\n" << message;
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/db"));
  }
}

TEST_F(ConvertAnnosetTest, LabelMapsWithDuplicatesAreRefused) {
  Write(dir_ + "/twice.prototxt", "item { name: 'a' label: 1 }\nitem { name: 'b' label: 1 }\n");
  EXPECT_EQ(ErrorMessageOf([&] { ssd::ReadLabelMap(dir_ + "/twice.prototxt"); }),
            dir_ + "/twice.prototxt: two items have label 1 (the second is 'b')");
  Write(dir_ + "/same.prototxt", "item { name: 'a' label: 1 }\nitem { name: 'a' label: 2 }\n");
  EXPECT_EQ(ErrorMessageOf([&] { ssd::ReadLabelMap(dir_ + "/same.prototxt"); }),
            dir_ + "/same.prototxt: two items are named 'a'");
}

}  // namespace
}  // namespace crema

#endif  // CREMA_OPENCV
