// (c) An HDF5 model (.caffemodel.h5): copy it into a small net and run
// it. A file that is not weights, shares no layer or has other shapes must be
// a crema::Error. libhdf5 reads the file in a child process (RunIsolated): a
// fault inside it (tests/fuzz/regressions/weights_h5/libhdf5_*) is an Error
// here too. The child still prints its sanitizer report, and libFuzzer's
// crash handler, inherited, writes the input as crash-* there: those are
// libhdf5 faults this process survived; the run's exit status says whether
// it failed. libFuzzer sees the coverage of this process only: the call, the
// result's decoding and the copy into the net.
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
