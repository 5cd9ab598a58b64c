// What an encoded image's header says, read before any pixel is decoded, so
// that the decode's memory can be bounded and a file that ends early is
// refused: a decoder (libjpeg) that runs out of data pads the image with grey,
// warns on stderr and reports success.
#ifndef CREMA_IMAGES_IMAGE_HEADER_HPP_
#define CREMA_IMAGES_IMAGE_HEADER_HPP_

#include <cstddef>
#include <cstdint>
#include <string>

namespace crema {

struct ImageHeader {
  enum class Format { kUnknown, kJpeg, kPng, kBmp };
  Format format = Format::kUnknown;
  // 0 when the header does not say (an unknown format, a JPEG whose height
  // comes after its first scan).
  uint64_t width = 0;
  uint64_t height = 0;
  // Why the bytes are not a whole image of their format ("" when they are,
  // and for unknown formats, which the decoder alone judges).
  std::string defect;
};

// Walks the structure of a JPEG (markers, segments, entropy-coded scans up
// to the end-of-image marker), a PNG (its chunks up to IEND) or a BMP (its
// file header); reads no pixel and allocates nothing in proportion to the
// sizes it reads.
ImageHeader ReadImageHeader(const uint8_t* bytes, size_t size);

// The most pixels (width x height) an image may have to be decoded:
// CREMA_MAX_IMAGE_PIXELS from the environment, else 50 million.
uint64_t MaxImagePixels();

}  // namespace crema

#endif  // CREMA_IMAGES_IMAGE_HEADER_HPP_
