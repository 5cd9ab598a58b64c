// Rewrites a net prototxt written in an older Caffe format (V0 or V1 layers,
// input fields, ...) in the current format.
//   upgrade_net_proto_text IN.prototxt OUT.prototxt
#include <gflags/gflags.h>

#include <cstdio>
#include <string>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/io.hpp"
#include "crema/util/upgrade_proto.hpp"

namespace {
const char kUsage[] =
    "rewrites a net prototxt in the current format\n"
    "usage: upgrade_net_proto_text IN.prototxt OUT.prototxt";
}  // namespace

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(kUsage);
  crema::GlobalInit(&argc, &argv);
  if (argc != 3) {
    std::fprintf(stderr, "%s\n", kUsage);
    return 1;
  }
  const std::string input = argv[1];
  const std::string output = argv[2];
  try {
    crema::NetParameter net_param;
    crema::ReadProtoFromTextFile(input, &net_param);
    if (!crema::UpgradeNetAsNeeded(input, &net_param)) {
      LOG(INFO) << "File already in latest proto format: " << input;
    }
    crema::WriteProtoToTextFile(net_param, output);
    LOG(INFO) << "Wrote upgraded NetParameter text proto to " << output;
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
  return 0;
}
