// (c) A .caffemodel (binary NetParameter): copy it into a small net and run
// it. A file that is not weights, shares no layer or has other shapes must
// be a crema::Error.
#include <memory>

#include "crema/util/io.hpp"
#include "fuzz_common.hpp"
#include "small_nets.hpp"

namespace crema {
namespace fuzz {
void WriteSeeds(const std::string& dir) {
  auto net = crema::fuzz::SmallDeployNet();
  net->Forward();
  NetParameter weights;
  net->ToProto(&weights, false);
  WriteProtoToBinaryFile(weights, dir + "/small.caffemodel");
  // Fine-tuning: the file holds only some of the layers.
  weights.mutable_layer()->DeleteSubrange(1, 2);
  WriteProtoToBinaryFile(weights, dir + "/partial.caffemodel");
}
}  // namespace fuzz
}  // namespace crema

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  crema::fuzz::CopyWeightsIntoSmallNet(data, size, ".caffemodel");
  return 0;
}
