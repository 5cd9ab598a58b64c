// (a) A net prototxt, as text: parse, upgrade, build the net (a training net
// that computes every bottom gradient), run one forward and one backward
// pass. Every failure must be a crema::Error; blobs above 16 MiB are refused.
// The net computes in double, so Crema's own (instrumented) layer bodies run:
// oneDNN's JIT kernels, which float nets use, are not instrumented, and
// libFuzzer's alarm signal arriving inside one made ASan report its own
// handler's frame as a heap overflow.
#include "crema/net.hpp"
#include "crema/util/io.hpp"
#include "fuzz_common.hpp"

namespace crema {
namespace fuzz {
// The seeds are the repository's and BVLC's prototxt files (run_fuzzer.sh).
void WriteSeeds(const std::string&) {}
}  // namespace fuzz
}  // namespace crema

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace crema;
  NetParameter param;
  try {
    ReadProtoFromString(std::string(reinterpret_cast<const char*>(data), size), "fuzz input",
                        &param);
    if (!param.state().has_phase()) param.mutable_state()->set_phase(TRAIN);
    param.set_force_backward(true);
    NetOptions<double> options;
    options.log = false;
    Net<double> net(param, options);
    net.Forward();
    net.Backward();
  } catch (const Error&) {
  }
  return 0;
}
