// DataTransformer: scale, mean values, mean file, crop (random at TRAIN,
// centred at TEST) and mirror, checked value by value.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "crema/data_transformer.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

// A 1 x 3 x 4 datum holding 0..11, or 2 channels of it (second channel +100).
Datum MakeDatum(int channels = 1) {
  Datum datum;
  datum.set_channels(channels);
  datum.set_height(3);
  datum.set_width(4);
  std::string data;
  for (int c = 0; c < channels; ++c) {
    for (int i = 0; i < 12; ++i) data.push_back(static_cast<char>(i + 100 * c));
  }
  datum.set_data(data);
  datum.set_label(7);
  return datum;
}

template <typename Dtype>
class DataTransformerTest : public ::testing::Test {};
TYPED_TEST_SUITE(DataTransformerTest, TestDtypes);

TYPED_TEST(DataTransformerTest, ScaleAndMeanValue) {
  TransformationParameter param;
  param.set_scale(0.5);
  param.add_mean_value(2);
  DataTransformer<TypeParam> transformer(param, TRAIN);
  Blob<TypeParam> blob(std::vector<int>{1, 1, 3, 4});
  transformer.Transform(MakeDatum(), &blob);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(blob.cpu_data()[i], TypeParam((i - 2) * 0.5)) << i;
}

TYPED_TEST(DataTransformerTest, PerChannelMeanValues) {
  TransformationParameter param;
  param.add_mean_value(1);
  param.add_mean_value(100);
  DataTransformer<TypeParam> transformer(param, TEST);
  Blob<TypeParam> blob(std::vector<int>{1, 2, 3, 4});
  transformer.Transform(MakeDatum(2), &blob);
  EXPECT_EQ(blob.cpu_data()[0], TypeParam(-1));
  EXPECT_EQ(blob.cpu_data()[11], TypeParam(10));
  EXPECT_EQ(blob.cpu_data()[12], TypeParam(0));   // 100 - 100
  EXPECT_EQ(blob.cpu_data()[23], TypeParam(11));  // 111 - 100
  param.add_mean_value(3);                        // three values for two channels
  DataTransformer<TypeParam> wrong(param, TEST);
  EXPECT_THROW(wrong.Transform(MakeDatum(2), &blob), Error);
}

TYPED_TEST(DataTransformerTest, MeanFile) {
  char pattern[] = "/tmp/crema_mean_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string file = std::string(pattern) + "/mean.binaryproto";
  BlobProto mean;
  mean.set_num(1);
  mean.set_channels(1);
  mean.set_height(3);
  mean.set_width(4);
  for (int i = 0; i < 12; ++i) mean.add_data(i);  // equal to the data: all zeros out
  WriteProtoToBinaryFile(mean, file);
  TransformationParameter param;
  param.set_mean_file(file);
  DataTransformer<TypeParam> transformer(param, TEST);
  Blob<TypeParam> blob(std::vector<int>{1, 1, 3, 4});
  transformer.Transform(MakeDatum(), &blob);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(blob.cpu_data()[i], TypeParam(0));
  param.add_mean_value(1);
  EXPECT_THROW(DataTransformer<TypeParam>(param, TEST), Error);  // both kinds at once
  std::system((std::string("rm -rf ") + pattern).c_str());
  TransformationParameter missing;
  missing.set_mean_file("/nonexistent/mean.binaryproto");
  EXPECT_THROW(DataTransformer<TypeParam>(missing, TEST), Error);
}

// A mean held in memory (Python's Transformer.set_mean) is subtracted as a
// mean file's is, cropped with the image; one of another shape, or given
// beside mean_value, is refused naming it.
TYPED_TEST(DataTransformerTest, MeanInMemory) {
  Blob<TypeParam> mean(std::vector<int>{1, 1, 3, 4});
  for (int i = 0; i < 12; ++i) mean.mutable_cpu_data()[i] = TypeParam(2 * i);
  TransformationParameter param;
  param.set_scale(0.5);
  param.set_crop_size(2);
  DataTransformer<TypeParam> transformer(param, TEST, mean);
  Blob<TypeParam> blob(std::vector<int>{1, 1, 2, 2});
  transformer.Transform(MakeDatum(), &blob);
  // The centre crop is values 1 2 / 5 6; the mean there 2 4 / 10 12.
  const TypeParam expected[] = {-0.5, -1, -2.5, -3};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(blob.cpu_data()[i], expected[i]) << i;

  Blob<TypeParam> turned(std::vector<int>{1, 1, 4, 3});
  DataTransformer<TypeParam> mismatched(TransformationParameter(), TEST, turned);
  EXPECT_NE(ErrorMessageOf([&] {
              mismatched.Transform(MakeDatum(), &blob);
            }).find("the mean has shape 1 1 4 3"),
            std::string::npos);
  Blob<TypeParam> planes(std::vector<int>{1, 3, 4});
  EXPECT_NE(ErrorMessageOf([&] {
              DataTransformer<TypeParam>(param, TEST, planes);
            }).find("the mean has shape 1 3 4 (12); expected one image"),
            std::string::npos);
  param.add_mean_value(1);
  EXPECT_NE(ErrorMessageOf([&] {
              DataTransformer<TypeParam>(param, TEST, mean);
            }).find("give no mean_file or mean_value besides"),
            std::string::npos);
}

TYPED_TEST(DataTransformerTest, CentreCropAtTest) {
  TransformationParameter param;
  param.set_crop_size(2);
  DataTransformer<TypeParam> transformer(param, TEST);
  EXPECT_EQ(transformer.InferBlobShape(MakeDatum()), (std::vector<int>{1, 1, 2, 2}));
  Blob<TypeParam> blob(std::vector<int>{1, 1, 2, 2});
  transformer.Transform(MakeDatum(), &blob);
  // Offsets (3-2)/2 = 0 rows, (4-2)/2 = 1 column: values 1 2 / 5 6.
  const TypeParam expected[] = {1, 2, 5, 6};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(blob.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(DataTransformerTest, RandomCropAtTrainCoversEveryOffset) {
  TransformationParameter param;
  param.set_crop_size(2);
  DataTransformer<TypeParam> transformer(param, TRAIN);
  Blob<TypeParam> blob(std::vector<int>{1, 1, 2, 2});
  std::set<int> corners;
  for (int trial = 0; trial < 200; ++trial) {
    transformer.Transform(MakeDatum(), &blob);
    const int corner = static_cast<int>(blob.cpu_data()[0]);
    corners.insert(corner);
    // Always a contiguous 2x2 window of the 3x4 image.
    EXPECT_EQ(blob.cpu_data()[1], corner + 1);
    EXPECT_EQ(blob.cpu_data()[2], corner + 4);
  }
  EXPECT_EQ(corners, (std::set<int>{0, 1, 2, 4, 5, 6}));  // 2 x 3 offsets
}

TYPED_TEST(DataTransformerTest, MirrorFlipsRowsSometimes) {
  TransformationParameter param;
  param.set_mirror(true);
  DataTransformer<TypeParam> transformer(param, TRAIN);
  Blob<TypeParam> blob(std::vector<int>{1, 1, 3, 4});
  int mirrored = 0;
  for (int trial = 0; trial < 100; ++trial) {
    transformer.Transform(MakeDatum(), &blob);
    if (blob.cpu_data()[0] == TypeParam(3)) {
      ++mirrored;
      const TypeParam expected[] = {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8};
      for (int i = 0; i < 12; ++i) ASSERT_EQ(blob.cpu_data()[i], expected[i]);
    } else {
      for (int i = 0; i < 12; ++i) ASSERT_EQ(blob.cpu_data()[i], TypeParam(i));
    }
  }
  EXPECT_GT(mirrored, 20);
  EXPECT_LT(mirrored, 80);
}

// Rows wide enough for the vectorised bodies (blocks of 8 plus a remainder),
// with a mean file or per-channel mean values, a scale, a random crop and
// mirror: every output is (value - mean) * scale of one crop, mirrored or not,
// and both kinds of each occur.
TYPED_TEST(DataTransformerTest, WideRowsMatchTheFormulaForEveryChoice) {
  const int channels = 2, height = 30, width = 29, crop = 27;
  Datum datum;
  datum.set_channels(channels);
  datum.set_height(height);
  datum.set_width(width);
  std::string bytes;
  for (int i = 0; i < channels * height * width; ++i) bytes.push_back(static_cast<char>(i * 37));
  datum.set_data(bytes);
  BlobProto mean_proto;
  for (int n : {1, channels, height, width}) mean_proto.mutable_shape()->add_dim(n);
  for (int i = 0; i < channels * height * width; ++i) mean_proto.add_data(0.25f * (i % 13));
  const std::string mean_file = ::testing::TempDir() + "wide_rows_mean.binaryproto";
  WriteProtoToBinaryFile(mean_proto, mean_file);
  for (const bool with_mean_file : {true, false}) {
    SCOPED_TRACE(with_mean_file ? "mean file" : "mean values");
    TransformationParameter param;
    param.set_crop_size(crop);
    param.set_mirror(true);
    param.set_scale(0.5f);
    if (with_mean_file) {
      param.set_mean_file(mean_file);
    } else {
      param.add_mean_value(3);
      param.add_mean_value(7);
    }
    const auto mean = [&](int c, int h, int w) {
      return with_mean_file ? static_cast<TypeParam>(mean_proto.data((c * height + h) * width + w))
                            : TypeParam(c == 0 ? 3 : 7);
    };
    // The output for crop offset (h_off, w_off), mirrored or not.
    const auto expected = [&](int h_off, int w_off, bool mirror) {
      std::vector<TypeParam> out;
      for (int c = 0; c < channels; ++c) {
        for (int h = 0; h < crop; ++h) {
          for (int w = 0; w < crop; ++w) {
            const int from_w = w_off + (mirror ? crop - 1 - w : w);
            const int from_h = h_off + h;
            TypeParam value = static_cast<uint8_t>(bytes[(c * height + from_h) * width + from_w]);
            value -= mean(c, from_h, from_w);
            out.push_back(value * TypeParam(0.5));
          }
        }
      }
      return out;
    };
    DataTransformer<TypeParam> transformer(param, TRAIN);
    Blob<TypeParam> blob(std::vector<int>{1, channels, crop, crop});
    std::set<bool> mirrors;
    for (int trial = 0; trial < 40; ++trial) {
      transformer.Transform(datum, &blob);
      const std::vector<TypeParam> got(blob.cpu_data(), blob.cpu_data() + blob.count());
      bool matched = false;
      for (int h_off = 0; h_off <= height - crop && !matched; ++h_off) {
        for (int w_off = 0; w_off <= width - crop && !matched; ++w_off) {
          for (const bool mirror : {false, true}) {
            if (got != expected(h_off, w_off, mirror)) continue;
            matched = true;
            mirrors.insert(mirror);
            break;
          }
        }
      }
      ASSERT_TRUE(matched) << "trial " << trial << ": no crop of the input gives this output";
    }
    EXPECT_EQ(mirrors.size(), 2u) << "40 trials were all mirrored, or none was";
  }
}

TYPED_TEST(DataTransformerTest, SeededThreadRepeatsItsChoices) {
  TransformationParameter param;
  param.set_crop_size(2);
  param.set_mirror(true);
  DataTransformer<TypeParam> transformer(param, TRAIN);
  Blob<TypeParam> a(std::vector<int>{1, 1, 2, 2}), b(std::vector<int>{1, 1, 2, 2});
  std::vector<TypeParam> first, second;
  Context::set_random_seed(3);
  for (int i = 0; i < 10; ++i) {
    transformer.Transform(MakeDatum(), &a);
    first.insert(first.end(), a.cpu_data(), a.cpu_data() + 4);
  }
  Context::set_random_seed(3);
  for (int i = 0; i < 10; ++i) {
    transformer.Transform(MakeDatum(), &b);
    second.insert(second.end(), b.cpu_data(), b.cpu_data() + 4);
  }
  EXPECT_EQ(first, second);
}

TYPED_TEST(DataTransformerTest, FloatDataAndBlobs) {
  Datum datum;
  datum.set_channels(1);
  datum.set_height(1);
  datum.set_width(3);
  for (float v : {0.5f, -1.f, 2.f}) datum.add_float_data(v);
  TransformationParameter param;
  param.set_scale(2);
  DataTransformer<TypeParam> transformer(param, TEST);
  Blob<TypeParam> out(std::vector<int>{1, 1, 1, 3});
  transformer.Transform(datum, &out);
  EXPECT_EQ(out.cpu_data()[0], TypeParam(1));
  EXPECT_EQ(out.cpu_data()[1], TypeParam(-2));
  Blob<TypeParam> in(std::vector<int>{2, 1, 1, 3}), out2(std::vector<int>{2, 1, 1, 3});
  for (int i = 0; i < 6; ++i) in.mutable_cpu_data()[i] = TypeParam(i);
  transformer.Transform(&in, &out2);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out2.cpu_data()[i], TypeParam(2 * i));
}

TYPED_TEST(DataTransformerTest, BadRecordsAreUserErrors) {
  TransformationParameter param;
  param.set_crop_size(5);  // larger than 3x4
  DataTransformer<TypeParam> cropper(param, TEST);
  EXPECT_THROW(cropper.InferBlobShape(MakeDatum()), Error);
  Datum encoded = MakeDatum();
  encoded.set_encoded(true);
  DataTransformer<TypeParam> plain(TransformationParameter(), TEST);
  EXPECT_THROW(plain.InferBlobShape(encoded), Error);
  Datum short_datum = MakeDatum();
  short_datum.set_data("abc");
  std::vector<TypeParam> out(12);
  EXPECT_THROW(plain.Transform(short_datum, out.data()), Error);
}

// A mean file that is not one image: five axes aborted (the legacy height of
// a 5-D blob), two images passed with the first used; both name the file.
TYPED_TEST(DataTransformerTest, MeanFileOfAnotherShapeNamesTheFile) {
  const std::string file = ::testing::TempDir() + "odd_mean.binaryproto";
  TransformationParameter param;
  param.set_mean_file(file);
  for (const std::vector<int>& shape : {std::vector<int>{1, 1, 1, 3, 4}, {2, 1, 3, 4}}) {
    BlobProto mean;
    int count = 1;
    for (int dim : shape) {
      mean.mutable_shape()->add_dim(dim);
      count *= dim;
    }
    for (int i = 0; i < count; ++i) mean.add_data(0);
    WriteProtoToBinaryFile(mean, file);
    const std::string message = ErrorMessageOf([&] { DataTransformer<TypeParam>(param, TEST); });
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find("1 x channels x height x width"), std::string::npos) << message;
  }
  BlobProto short_mean;  // 1 value for 12
  for (int dim : {1, 1, 3, 4}) short_mean.mutable_shape()->add_dim(dim);
  short_mean.add_data(0);
  WriteProtoToBinaryFile(short_mean, file);
  const std::string message = ErrorMessageOf([&] { DataTransformer<TypeParam>(param, TEST); });
  EXPECT_NE(message.find("the mean file " + file + ": "), std::string::npos) << message;
  std::remove(file.c_str());
}

// The mean must match the data as stored (before the crop); the message
// gives both shapes.
TYPED_TEST(DataTransformerTest, MeanFileOfOtherSizeNamesBothShapes) {
  const std::string file = ::testing::TempDir() + "small_mean.binaryproto";
  BlobProto mean;
  for (int dim : {1, 1, 2, 2}) mean.mutable_shape()->add_dim(dim);
  for (int i = 0; i < 4; ++i) mean.add_data(0);
  WriteProtoToBinaryFile(mean, file);
  TransformationParameter param;
  param.set_mean_file(file);
  param.set_crop_size(2);  // the crop's size does not make a 2 x 2 mean fit
  DataTransformer<TypeParam> transformer(param, TEST);
  const std::string message = ErrorMessageOf([&] { transformer.InferBlobShape(MakeDatum()); });
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find("1 1 2 2"), std::string::npos) << message;
  EXPECT_NE(message.find("1x3x4"), std::string::npos) << message;
  std::remove(file.c_str());
}

// A record of the first one's size in another shape (4 x 3 after 3 x 4) was
// written into the batch and read across rows.
TYPED_TEST(DataTransformerTest, RecordOfAnotherShapeIsRefused) {
  DataTransformer<TypeParam> transformer(TransformationParameter(), TEST);
  const std::vector<int> batch_shape{8, 1, 3, 4};
  std::vector<TypeParam> out(12);
  transformer.Transform(MakeDatum(), out.data(), batch_shape);
  Datum turned = MakeDatum();
  turned.set_height(4);
  turned.set_width(3);
  const std::string message =
      ErrorMessageOf([&] { transformer.Transform(turned, out.data(), batch_shape); });
  EXPECT_NE(message.find("1 x 4 x 3"), std::string::npos) << message;
  EXPECT_NE(message.find("1 x 3 x 4"), std::string::npos) << message;
}

// A blob of five axes has no legacy num/channels/height/width: an Error.
TYPED_TEST(DataTransformerTest, FiveAxisBlobIsRefused) {
  DataTransformer<TypeParam> transformer(TransformationParameter(), TEST);
  Blob<TypeParam> in(std::vector<int>{1, 1, 1, 3, 4}), out(std::vector<int>{1, 1, 3, 4});
  EXPECT_THROW(transformer.Transform(&in, &out), Error);
}

}  // namespace
}  // namespace crema
