// (g) A pair of MNIST idx files (images, labels), gzipped or not, as
// convert_mnist_data reads them: the first two bytes say where the image
// file ends, the rest is split there. Bad headers, counts or truncation must
// be an Error naming the file.
#include <zlib.h>

#include <algorithm>
#include <vector>

#include "crema/common.hpp"
#include "crema/data/converters/convert_mnist.hpp"
#include "fuzz_common.hpp"

namespace {
void AppendBigEndian(uint32_t value, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) *out += static_cast<char>((value >> shift) & 255);
}

// An idx file: magic number, dimensions (big-endian 32-bit), then the bytes.
std::string Idx(uint32_t magic, const std::vector<uint32_t>& dims, const std::string& body) {
  std::string out;
  AppendBigEndian(magic, &out);
  for (uint32_t value : dims) AppendBigEndian(value, &out);
  return out + body;
}

std::string Gzip(const std::string& raw) {
  std::string out(compressBound(raw.size()) + 32, '\0');
  z_stream stream{};
  deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  stream.avail_in = static_cast<uInt>(raw.size());
  stream.next_out = reinterpret_cast<Bytef*>(&out[0]);
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string Pair(const std::string& images, const std::string& labels) {
  const size_t split = images.size();
  return std::string{static_cast<char>(split >> 8), static_cast<char>(split & 255)} + images +
         labels;
}
}  // namespace

namespace crema {
namespace fuzz {
void WriteSeeds(const std::string& dir) {
  std::string pixels(3 * 4 * 4, '\0');
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<char>(i * 5);
  const std::string images = Idx(0x803, {3, 4, 4}, pixels);
  const std::string labels = Idx(0x801, {3}, std::string("\x01\x02\x09", 3));
  WriteFile(dir + "/raw", Pair(images, labels));
  WriteFile(dir + "/gzip", Pair(Gzip(images), Gzip(labels)));
}
}  // namespace fuzz
}  // namespace crema

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t split = std::min<size_t>((size_t(data[0]) << 8) | data[1], size - 2);
  const std::string& dir = crema::fuzz::WorkDir();
  const std::string images = dir + "/images-idx3-ubyte", labels = dir + "/labels-idx1-ubyte";
  crema::fuzz::WriteFile(images, data + 2, split);
  crema::fuzz::WriteFile(labels, data + 2 + split, size - 2 - split);
  const std::string db = dir + "/db";
  try {
    crema::ConvertMnist(images, labels, db, "lmdb");
  } catch (const crema::Error&) {
  }
  crema::fuzz::Remove(db);
  return 0;
}
