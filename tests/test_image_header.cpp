// The image header reader that bounds decoding: whole files pass with their
// sizes, every cut-short prefix is refused, and the pixel limit holds before
// any pixel is decoded.
#ifdef CREMA_OPENCV

#include "crema/images/image_header.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <opencv2/core/core.hpp>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <string>
#include <vector>

#include "crema/util/image_io.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

std::vector<uint8_t> Encoded(const std::string& extension, int rows, int cols,
                             const std::vector<int>& flags = {}) {
  cv::Mat image(rows, cols, CV_8UC3);
  cv::randu(image, 0, 256);
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(cv::imencode(extension, image, bytes, flags));
  return bytes;
}

ImageHeader HeaderOf(const std::vector<uint8_t>& bytes, size_t size) {
  return ReadImageHeader(bytes.data(), size);
}

// Sets the environment for one scope.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    setenv(name, value, 1);
  }
  ~ScopedEnvironment() { unsetenv(name_); }

 private:
  const char* name_;
};

void ExpectWholeAndEveryPrefixRefused(const std::vector<uint8_t>& bytes, ImageHeader::Format format,
                                      uint64_t width, uint64_t height) {
  const ImageHeader whole = HeaderOf(bytes, bytes.size());
  EXPECT_EQ(whole.format, format);
  EXPECT_EQ(whole.defect, "");
  EXPECT_EQ(whole.width, width);
  EXPECT_EQ(whole.height, height);
  // Every prefix long enough to be recognised is cut short.
  for (size_t size = 8; size < bytes.size(); ++size) {
    const ImageHeader cut = HeaderOf(bytes, size);
    ASSERT_EQ(cut.format, format) << size;
    EXPECT_NE(cut.defect, "") << "a prefix of " << size << " of " << bytes.size() << " bytes";
  }
}

TEST(ImageHeaderTest, BaselineJpegIsWholeAndItsPrefixesAreNot) {
  ExpectWholeAndEveryPrefixRefused(Encoded(".jpg", 37, 53), ImageHeader::Format::kJpeg, 53, 37);
}

TEST(ImageHeaderTest, ProgressiveJpegWithRestartsIsWholeAndItsPrefixesAreNot) {
  const std::vector<int> flags = {cv::IMWRITE_JPEG_PROGRESSIVE, 1, cv::IMWRITE_JPEG_RST_INTERVAL,
                                  2};
  ExpectWholeAndEveryPrefixRefused(Encoded(".jpg", 40, 24, flags), ImageHeader::Format::kJpeg, 24,
                                   40);
}

TEST(ImageHeaderTest, PngIsWholeAndItsPrefixesAreNot) {
  ExpectWholeAndEveryPrefixRefused(Encoded(".png", 19, 300), ImageHeader::Format::kPng, 300, 19);
}

TEST(ImageHeaderTest, BmpGivesItsSize) {
  const std::vector<uint8_t> bytes = Encoded(".bmp", 21, 13);
  const ImageHeader header = HeaderOf(bytes, bytes.size());
  EXPECT_EQ(header.format, ImageHeader::Format::kBmp);
  EXPECT_EQ(header.defect, "");
  EXPECT_EQ(header.width, 13u);
  EXPECT_EQ(header.height, 21u);
  EXPECT_NE(HeaderOf(bytes, 20).defect, "");
}

TEST(ImageHeaderTest, BytesAfterTheEndOfAJpegAreIgnored) {
  std::vector<uint8_t> bytes = Encoded(".jpg", 8, 8);
  bytes.insert(bytes.end(), {0x00, 0x12, 0xFF});
  EXPECT_EQ(HeaderOf(bytes, bytes.size()).defect, "");
}

TEST(ImageHeaderTest, StrayBytesBetweenJpegSegmentsAreADefect) {
  std::vector<uint8_t> bytes = Encoded(".jpg", 8, 8);
  // After the first segment (its length at bytes 4 and 5).
  const size_t second = 4 + (size_t(bytes[4]) << 8 | bytes[5]);
  bytes.insert(bytes.begin() + second, 0x42);
  EXPECT_EQ(HeaderOf(bytes, bytes.size()).defect, "stray data at byte " + std::to_string(second));
}

TEST(ImageHeaderTest, OtherFormatsAreLeftToTheDecoder) {
  const std::vector<uint8_t> bytes = {'P', '5', '\n', '1', ' ', '1', '\n', '2', '5', '5', '\n', 7};
  const ImageHeader header = HeaderOf(bytes, bytes.size());
  EXPECT_EQ(header.format, ImageHeader::Format::kUnknown);
  EXPECT_EQ(header.defect, "");
  EXPECT_EQ(header.width * header.height, 0u);
}

TEST(ImageHeaderTest, PixelLimitRefusesBeforeDecodingAndNamesTheRecord) {
  const std::vector<uint8_t> bytes = Encoded(".jpg", 16, 16);
  Datum datum;
  datum.set_encoded(true);
  datum.set_data(std::string(bytes.begin(), bytes.end()));
  EXPECT_EQ(DecodeDatumToCVMat(datum, ImageColor::kColor, "record 'a'").cols, 16);
  const ScopedEnvironment limit("CREMA_MAX_IMAGE_PIXELS", "255");
  EXPECT_EQ(ErrorMessageOf([&] { DecodeDatumToCVMat(datum, ImageColor::kColor, "record 'a'"); }),
            "record 'a': an image of 16 x 16 = 256 pixels, above the limit of 255 "
            "(CREMA_MAX_IMAGE_PIXELS raises it)");
}

TEST(ImageHeaderTest, PixelLimitHoldsForFormatsWhoseHeaderIsNotRead) {
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(cv::imencode(".pgm", cv::Mat(16, 16, CV_8UC1, cv::Scalar(9)), bytes));
  Datum datum;
  datum.set_encoded(true);
  datum.set_data(std::string(bytes.begin(), bytes.end()));
  const ScopedEnvironment limit("CREMA_MAX_IMAGE_PIXELS", "100");
  EXPECT_EQ(ErrorMessageOf([&] { DecodeDatumToCVMat(datum, ImageColor::kGray, "record 'b'"); }),
            "record 'b': an image of 16 x 16 = 256 pixels, above the limit of 100 "
            "(CREMA_MAX_IMAGE_PIXELS raises it)");
}

TEST(ImageHeaderTest, ALimitThatIsNotAPositiveNumberIsNamed) {
  for (const char* value : {"0", "-5", "many", "12x", "99999999999999999999999"}) {
    const ScopedEnvironment limit("CREMA_MAX_IMAGE_PIXELS", value);
    EXPECT_EQ(ErrorMessageOf([] { MaxImagePixels(); }),
              std::string("CREMA_MAX_IMAGE_PIXELS='") + value + "' is not a positive whole number");
  }
}

}  // namespace
}  // namespace crema

#endif  // CREMA_OPENCV
