// Blob: shapes, reshaping without needless allocation, sharing, copying,
// the proto round trip, and the reductions, for float and double.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "crema/blob.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

using ::testing::HasSubstr;

template <typename Dtype>
class BlobTest : public ::testing::Test {
 protected:
  // Fills data with 1..count and diff with -(1..count).
  static void FillSequence(Blob<Dtype>* blob) {
    Dtype* data = blob->mutable_cpu_data();
    Dtype* diff = blob->mutable_cpu_diff();
    for (int i = 0; i < blob->count(); ++i) {
      data[i] = Dtype(i + 1);
      diff[i] = -Dtype(i + 1);
    }
  }
};
TYPED_TEST_SUITE(BlobTest, TestDtypes);

TYPED_TEST(BlobTest, EmptyBlob) {
  Blob<TypeParam> blob;
  EXPECT_EQ(blob.count(), 0);
  EXPECT_EQ(blob.num_axes(), 0);
}

TYPED_TEST(BlobTest, LegacyShapeAndCounts) {
  Blob<TypeParam> blob(2, 3, 4, 5);
  EXPECT_EQ(blob.num(), 2);
  EXPECT_EQ(blob.channels(), 3);
  EXPECT_EQ(blob.height(), 4);
  EXPECT_EQ(blob.width(), 5);
  EXPECT_EQ(blob.count(), 120);
  EXPECT_EQ(blob.count(1), 60);
  EXPECT_EQ(blob.count(1, 3), 12);
  EXPECT_EQ(blob.shape(-1), 5);
  EXPECT_EQ(blob.CanonicalAxisIndex(-4), 0);
  EXPECT_EQ(blob.offset(1, 2, 3, 4), 119);
  EXPECT_EQ(blob.offset(std::vector<int>{1, 0, 1}), 65);
  EXPECT_EQ(blob.shape_string(), "2 3 4 5 (120)");
  EXPECT_THROW(blob.CanonicalAxisIndex(4), Error);
}

TYPED_TEST(BlobTest, NdShapeAndLegacyPadding) {
  Blob<TypeParam> blob(std::vector<int>{7});
  EXPECT_EQ(blob.count(), 7);
  EXPECT_EQ(blob.num(), 7);
  EXPECT_EQ(blob.channels(), 1);
  EXPECT_EQ(blob.width(), 1);
  Blob<TypeParam> scalar(std::vector<int>{});
  EXPECT_EQ(scalar.count(), 1);  // a 0-axis blob holds one value
  Blob<TypeParam> six(std::vector<int>{1, 2, 1, 2, 1, 2});
  EXPECT_EQ(six.count(), 8);
  EXPECT_EQ(six.num_axes(), 6);
}

TYPED_TEST(BlobTest, BadShapesAreUserErrors) {
  Blob<TypeParam> blob;
  EXPECT_THROW(blob.Reshape(std::vector<int>{2, -1}), Error);
  EXPECT_THROW(blob.Reshape(std::vector<int>(33, 1)), Error);
  EXPECT_THROW(blob.Reshape(std::vector<int>{1 << 16, 1 << 16}), Error);
}

TYPED_TEST(BlobTest, ReshapeToSmallerKeepsMemory) {
  Blob<TypeParam> blob(2, 3, 4, 5);
  const TypeParam* data = blob.cpu_data();
  blob.Reshape(1, 3, 4, 5);
  EXPECT_EQ(blob.cpu_data(), data);
  EXPECT_EQ(blob.count(), 60);
  blob.Reshape(2, 3, 4, 5);
  EXPECT_EQ(blob.cpu_data(), data);  // back within capacity
  blob.Reshape(3, 3, 4, 5);
  EXPECT_EQ(blob.count(), 180);
}

TYPED_TEST(BlobTest, ReductionsAndScaling) {
  Blob<TypeParam> blob(1, 1, 2, 2);
  this->FillSequence(&blob);  // data 1 2 3 4, diff -1 -2 -3 -4
  EXPECT_EQ(blob.asum_data(), TypeParam(10));
  EXPECT_EQ(blob.asum_diff(), TypeParam(10));
  EXPECT_EQ(blob.sumsq_data(), TypeParam(30));
  EXPECT_EQ(blob.sumsq_diff(), TypeParam(30));
  blob.scale_data(TypeParam(2));
  EXPECT_EQ(blob.cpu_data()[3], TypeParam(8));
  blob.scale_diff(TypeParam(0.5));
  EXPECT_EQ(blob.cpu_diff()[1], TypeParam(-1));
}

TYPED_TEST(BlobTest, UpdateSubtractsDiff) {
  Blob<TypeParam> blob(1, 1, 1, 3);
  this->FillSequence(&blob);
  blob.Update();  // data - diff = 2 * data
  EXPECT_EQ(blob.cpu_data()[0], TypeParam(2));
  EXPECT_EQ(blob.cpu_data()[2], TypeParam(6));
}

TYPED_TEST(BlobTest, ShareDataAndDiff) {
  Blob<TypeParam> a(1, 1, 1, 4), b(1, 1, 2, 2);
  this->FillSequence(&a);
  b.ShareData(a);
  b.ShareDiff(a);
  EXPECT_EQ(b.cpu_data(), a.cpu_data());
  EXPECT_EQ(b.cpu_diff()[3], TypeParam(-4));
  b.mutable_cpu_data()[0] = TypeParam(9);
  EXPECT_EQ(a.cpu_data()[0], TypeParam(9));
}

TYPED_TEST(BlobTest, CopyFromChecksShapeUnlessReshaping) {
  Blob<TypeParam> source(1, 2, 1, 2), target(1, 1, 1, 1);
  this->FillSequence(&source);
  EXPECT_THROW(target.CopyFrom(source), Error);
  target.CopyFrom(source, false, true);
  EXPECT_EQ(target.shape(), source.shape());
  EXPECT_EQ(target.cpu_data()[3], TypeParam(4));
  target.CopyFrom(source, true);
  EXPECT_EQ(target.cpu_diff()[2], TypeParam(-3));
  EXPECT_NE(target.cpu_data(), source.cpu_data());  // a copy, not a share
}

TYPED_TEST(BlobTest, ProtoRoundTripIsExact) {
  Blob<TypeParam> blob(std::vector<int>{2, 3});
  this->FillSequence(&blob);
  blob.mutable_cpu_data()[0] = TypeParam(0.1);  // not exact in binary: must survive anyway
  BlobProto proto;
  blob.ToProto(&proto, true);
  EXPECT_EQ(proto.shape().dim_size(), 2);
  Blob<TypeParam> back;
  back.FromProto(proto);
  EXPECT_EQ(back.shape(), blob.shape());
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(back.cpu_data()[i], blob.cpu_data()[i]);
    EXPECT_EQ(back.cpu_diff()[i], blob.cpu_diff()[i]);
  }
}

TYPED_TEST(BlobTest, ReadsLegacyAndFloatProtos) {
  BlobProto proto;  // the old 4-D form, float values, as in old .caffemodel files
  proto.set_num(1);
  proto.set_channels(2);
  proto.set_height(1);
  proto.set_width(2);
  for (int i = 0; i < 4; ++i) proto.add_data(0.5f * i);
  Blob<TypeParam> blob;
  blob.FromProto(proto);
  EXPECT_EQ(blob.shape(), (std::vector<int>{1, 2, 1, 2}));
  EXPECT_EQ(blob.cpu_data()[3], TypeParam(1.5));
  EXPECT_TRUE(blob.ShapeEquals(proto));
  Blob<TypeParam> wrong(1, 1, 2, 2);
  EXPECT_FALSE(wrong.ShapeEquals(proto));
  try {
    wrong.FromProto(proto, false);
    FAIL() << "a shape mismatch must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 1 1 2 2"), std::string::npos) << e.what();
  }
}

// NVCaffe 0.17's blobs, as its blob.cpp writes them by default: the shape,
// then raw_data holding the values' bytes in the blob's own type, named by
// raw_data_type. Half values by their IEEE binary16 bit patterns: 0.5,
// -1.25, 3, 65504 (the largest), 2^-24 (the smallest subnormal), 2^-14 (the
// smallest normal), 1/3 rounded, and -0.
TYPED_TEST(BlobTest, ReadsNvcaffeRawData) {
  const std::vector<uint16_t> halves = {0x3800, 0xBD00, 0x4200, 0x7BFF,
                                        0x0001, 0x0400, 0x3555, 0x8000};
  const std::vector<double> expected = {
      0.5, -1.25, 3, 65504, 5.9604644775390625e-08, 6.103515625e-05, 0.333251953125, -0.0};
  BlobProto half;
  half.mutable_shape()->add_dim(2);
  half.mutable_shape()->add_dim(4);
  half.set_raw_data_type(FLOAT16);
  half.set_raw_data(std::string(reinterpret_cast<const char*>(halves.data()), 2 * halves.size()));
  Blob<TypeParam> blob;
  blob.FromProto(half);
  EXPECT_EQ(blob.shape(), (std::vector<int>{2, 4}));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(blob.cpu_data()[i], TypeParam(expected[i])) << i;
  EXPECT_TRUE(std::signbit(blob.cpu_data()[7]));

  const std::vector<float> floats = {1.5f, -2.25f, 1e-30f, 3.4e38f};
  BlobProto single;
  single.mutable_shape()->add_dim(4);
  single.set_raw_data_type(FLOAT);
  single.set_raw_data(std::string(reinterpret_cast<const char*>(floats.data()), 16));
  const std::vector<double> doubles = {0.1, -1e300};
  BlobProto wide;
  wide.mutable_shape()->add_dim(2);
  wide.set_raw_data_type(DOUBLE);
  wide.set_raw_data(std::string(reinterpret_cast<const char*>(doubles.data()), 16));
  // The diff the same way, in raw_diff.
  wide.set_raw_diff_type(DOUBLE);
  wide.set_raw_diff(wide.raw_data());
  blob.FromProto(single);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(blob.cpu_data()[i], TypeParam(floats[i])) << i;
  blob.FromProto(wide);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(blob.cpu_data()[i], TypeParam(doubles[i])) << i;
    EXPECT_EQ(blob.cpu_diff()[i], TypeParam(doubles[i])) << i;
  }
  // Float values win over raw bytes, as in NVCaffe's reader.
  BlobProto both = single;
  for (int i = 0; i < 4; ++i) both.add_data(7.f);
  blob.FromProto(both);
  EXPECT_EQ(blob.cpu_data()[0], TypeParam(7));
}

// Raw bytes that do not fit the shape, or say nothing of their type, or hold
// a type Crema does not read, are one error each, saying so.
TYPED_TEST(BlobTest, BadNvcaffeRawDataIsRefusedSayingWhy) {
  BlobProto proto;
  proto.mutable_shape()->add_dim(3);
  proto.set_raw_data_type(FLOAT16);
  proto.set_raw_data(std::string(5, '\0'));
  Blob<TypeParam> blob;
  EXPECT_THAT(ErrorMessageOf([&] { blob.FromProto(proto); }),
              HasSubstr("raw_data holds 5 bytes, its shape needs 3 FLOAT16 values (6 bytes)"));
  proto.clear_raw_data_type();
  EXPECT_THAT(ErrorMessageOf([&] { blob.FromProto(proto); }), HasSubstr("no raw_data_type"));
  proto.set_raw_data_type(INT);
  proto.set_raw_data(std::string(12, '\0'));
  EXPECT_THAT(ErrorMessageOf([&] { blob.FromProto(proto); }),
              HasSubstr("holds INT values; Crema reads FLOAT, FLOAT16 and DOUBLE"));
}

TYPED_TEST(BlobTest, ProtoWithWrongValueCountIsRefused) {
  BlobProto proto;
  proto.mutable_shape()->add_dim(3);
  proto.add_data(1.f);
  Blob<TypeParam> blob;
  EXPECT_THROW(blob.FromProto(proto), Error);
}

// An Input or DummyData dimension of 0 gives a blob of count 0; its memory
// must still be there to pass along (it was a CHECK abort).
TYPED_TEST(BlobTest, ZeroCountBlobHasMemory) {
  Blob<TypeParam> blob(std::vector<int>{0, 3});
  EXPECT_EQ(blob.count(), 0);
  EXPECT_NE(blob.cpu_data(), nullptr);
  EXPECT_NE(blob.mutable_cpu_diff(), nullptr);
  EXPECT_EQ(blob.asum_data(), TypeParam(0));
}

// A stored 64-bit size must not wrap into an int: -4294967295 is 1 as an int.
TYPED_TEST(BlobTest, StoredSizesOutsideIntAreRefused) {
  BlobShape shape;
  shape.add_dim(-4294967295LL);
  Blob<TypeParam> blob;
  EXPECT_THAT(ErrorMessageOf([&] { blob.Reshape(shape); }), HasSubstr("-4294967295"));
  BlobProto proto;
  proto.mutable_shape()->add_dim(4294967297LL);  // 1 as an int
  proto.add_data(1.f);
  EXPECT_THAT(ErrorMessageOf([&] { blob.FromProto(proto); }), HasSubstr("4294967297"));
  Blob<TypeParam> one(std::vector<int>{1});
  EXPECT_FALSE(one.ShapeEquals(proto));
}

// Layers compute these axes from their parameters: a wrong one is an Error
// (the layer adds its name), not an abort.
TYPED_TEST(BlobTest, CountOverAxesOutsideTheBlobIsAnError) {
  Blob<TypeParam> blob(std::vector<int>{2, 3});
  EXPECT_EQ(blob.count(1, 2), 3);
  EXPECT_THAT(ErrorMessageOf([&] { blob.count(1, 3); }), HasSubstr("not within the 2 axes"));
  EXPECT_THAT(ErrorMessageOf([&] { blob.count(2, 1); }), HasSubstr("2 3 (6)"));
  EXPECT_FALSE(ErrorMessageOf([&] { blob.count(-1, 1); }).empty());
}

TYPED_TEST(BlobTest, LegacyAccessorsOfAFiveAxisBlobAreAnError) {
  Blob<TypeParam> blob(std::vector<int>{1, 2, 3, 4, 5});
  EXPECT_THAT(ErrorMessageOf([&] { blob.channels(); }), HasSubstr("more than 4 axes"));
}

TYPED_TEST(BlobTest, ProtoDiffWithWrongValueCountSaysHowMany) {
  BlobProto proto;
  proto.mutable_shape()->add_dim(2);
  proto.add_data(1.f);
  proto.add_data(2.f);
  proto.add_diff(1.f);
  Blob<TypeParam> blob;
  EXPECT_THAT(ErrorMessageOf([&] { blob.FromProto(proto); }),
              HasSubstr("diff holds 1 values, its shape needs 2"));
}

}  // namespace
}  // namespace crema
