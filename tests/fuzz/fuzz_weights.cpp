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
  static std::unique_ptr<crema::Net<float>> net = crema::fuzz::SmallDeployNet();
  const std::string path = crema::fuzz::WorkDir() + "/input.caffemodel";
  crema::fuzz::WriteFile(path, data, size);
  try {
    net->CopyTrainedLayersFrom(path);
    net->Forward();
  } catch (const crema::Error&) {
  }
  return 0;
}
