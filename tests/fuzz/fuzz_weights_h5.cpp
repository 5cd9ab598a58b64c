// (c) An HDF5 model (.caffemodel.h5): copy it into a small net and run
// it (HDF5 1.10 reads the file). A file that is not weights, shares no layer or has other shapes
// must be a crema::Error.
#include <memory>

#include "crema/util/io.hpp"
#include "fuzz_common.hpp"
#include "small_nets.hpp"

namespace crema {
namespace fuzz {
void WriteSeeds(const std::string& dir) {
  auto net = crema::fuzz::SmallDeployNet();
  net->Forward();
  net->ToHDF5(dir + "/small.caffemodel.h5");
}
}  // namespace fuzz
}  // namespace crema

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  crema::fuzz::CopyWeightsIntoSmallNet(data, size, ".caffemodel.h5");
  return 0;
}
