#include "crema/images/image_header.hpp"

#include <cstring>
#include <sstream>

#include "crema/util/io.hpp"

namespace crema {

namespace {

uint32_t BigEndian32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
uint32_t LittleEndian32(const uint8_t* p) {
  return uint32_t(p[3]) << 24 | uint32_t(p[2]) << 16 | uint32_t(p[1]) << 8 | p[0];
}

std::string AtOffset(const std::string& what, size_t offset) {
  std::ostringstream text;
  text << what << " at byte " << offset;
  return text.str();
}

// JPEG markers (ITU T.81, table B.1): 0xFF then a code. Start-of-frame codes
// carry the frame's height and width; RSTn, TEM stand alone; all others
// are followed by a two-byte segment length that counts itself.
bool IsStartOfFrame(uint8_t code) {
  return code >= 0xC0 && code <= 0xCF && code != 0xC4 && code != 0xC8 && code != 0xCC;
}
bool StandsAlone(uint8_t code) { return (code >= 0xD0 && code <= 0xD7) || code == 0x01; }

// Inside a scan, 0xFF is followed by 0x00 (a stuffed data byte), a restart
// code or more 0xFF fill; anything else is the next marker. Returns its
// offset, or `size` when the data ends first.
size_t EndOfScan(const uint8_t* bytes, size_t size, size_t offset) {
  while (offset + 1 < size) {
    const void* found = std::memchr(bytes + offset, 0xFF, size - offset - 1);
    if (!found) return size;
    offset = static_cast<size_t>(static_cast<const uint8_t*>(found) - bytes);
    const uint8_t next = bytes[offset + 1];
    if (next != 0x00 && next != 0xFF && !(next >= 0xD0 && next <= 0xD7)) return offset;
    ++offset;
  }
  return size;
}

ImageHeader ReadJpeg(const uint8_t* bytes, size_t size) {
  ImageHeader header;
  header.format = ImageHeader::Format::kJpeg;
  const std::string ends_early = "the data ends before the end-of-image marker (a truncated file)";
  bool scanned = false;
  size_t offset = 2;  // past the start-of-image marker
  while (true) {
    if (offset >= size) return header.defect = ends_early, header;
    if (bytes[offset] != 0xFF) return header.defect = AtOffset("stray data", offset), header;
    while (offset < size && bytes[offset] == 0xFF) ++offset;  // fill bytes
    if (offset >= size) return header.defect = ends_early, header;
    const uint8_t code = bytes[offset++];
    if (code == 0xD9) {
      if (!scanned) header.defect = "no image data before the end-of-image marker";
      return header;
    }
    if (StandsAlone(code)) continue;
    if (code == 0x00 || code == 0xD8) {
      return header.defect = AtOffset("a misplaced marker", offset - 2), header;
    }
    if (offset + 2 > size) return header.defect = ends_early, header;
    const size_t length = size_t(bytes[offset]) << 8 | bytes[offset + 1];
    if (length < 2) return header.defect = AtOffset("a segment shorter than its length", offset), header;
    if (offset + length > size) return header.defect = ends_early, header;
    const uint8_t* segment = bytes + offset + 2;
    if (IsStartOfFrame(code) && header.width == 0) {
      if (length < 7) return header.defect = AtOffset("a short frame header", offset), header;
      header.height = uint64_t(segment[1]) << 8 | segment[2];
      header.width = uint64_t(segment[3]) << 8 | segment[4];
    }
    offset += length;
    if (code == 0xDA) {  // start of scan: entropy-coded data follows
      scanned = true;
      offset = EndOfScan(bytes, size, offset);
    }
  }
}

// PNG: an 8-byte signature, then chunks (length, type, data, CRC), IHDR
// first (width, height), IEND last.
ImageHeader ReadPng(const uint8_t* bytes, size_t size) {
  ImageHeader header;
  header.format = ImageHeader::Format::kPng;
  if (size < 33 || std::memcmp(bytes + 12, "IHDR", 4) != 0) {
    header.defect = "no image header (IHDR) after the signature";
    return header;
  }
  header.width = BigEndian32(bytes + 16);
  header.height = BigEndian32(bytes + 20);
  size_t offset = 8;
  while (true) {
    if (offset + 12 > size) break;
    const uint64_t length = BigEndian32(bytes + offset);
    if (length > 0x7FFFFFFFu || offset + 12 + length > size) break;
    if (std::memcmp(bytes + offset + 4, "IEND", 4) == 0) return header;
    offset += 12 + length;
  }
  header.defect = "the data ends before the IEND chunk (a truncated file)";
  return header;
}

// BMP: "BM", the offset of the pixels at byte 10, then the info header whose
// size (byte 14) tells 16-bit (OS/2) from 32-bit (Windows) dimensions.
ImageHeader ReadBmp(const uint8_t* bytes, size_t size) {
  ImageHeader header;
  header.format = ImageHeader::Format::kBmp;
  if (size < 26) {
    header.defect = "the data ends inside the file header (a truncated file)";
    return header;
  }
  if (LittleEndian32(bytes + 14) == 12) {
    header.width = uint64_t(bytes[18]) | uint64_t(bytes[19]) << 8;
    header.height = uint64_t(bytes[20]) | uint64_t(bytes[21]) << 8;
  } else {
    const int64_t width = static_cast<int32_t>(LittleEndian32(bytes + 18));
    const int64_t height = static_cast<int32_t>(LittleEndian32(bytes + 22));
    header.width = static_cast<uint64_t>(width < 0 ? -width : width);
    header.height = static_cast<uint64_t>(height < 0 ? -height : height);  // < 0: top-down
  }
  if (LittleEndian32(bytes + 10) >= size) {
    header.defect = "the data ends before the pixels (a truncated file)";
  }
  return header;
}

}  // namespace

ImageHeader ReadImageHeader(const uint8_t* bytes, size_t size) {
  static const uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (size >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) {
    return ReadJpeg(bytes, size);
  }
  if (size >= 8 && std::memcmp(bytes, kPngSignature, 8) == 0) return ReadPng(bytes, size);
  if (size >= 2 && bytes[0] == 'B' && bytes[1] == 'M') return ReadBmp(bytes, size);
  return ImageHeader();
}

uint64_t MaxImagePixels() { return LimitFromEnvironment("CREMA_MAX_IMAGE_PIXELS", 50000000); }

}  // namespace crema
