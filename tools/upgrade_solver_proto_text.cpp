// Rewrites a solver prototxt written in an older Caffe format (the
// solver_type enum, nets embedded in V1 format) in the current format.
//   upgrade_solver_proto_text IN.prototxt OUT.prototxt
#include <gflags/gflags.h>

#include <cstdio>
#include <string>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/io.hpp"
#include "crema/util/upgrade_proto.hpp"

namespace {
const char kUsage[] =
    "rewrites a solver prototxt in the current format\n"
    "usage: upgrade_solver_proto_text IN.prototxt OUT.prototxt";
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
    crema::SolverParameter solver_param;
    crema::ReadProtoFromTextFile(input, &solver_param);
    if (!crema::UpgradeSolverAsNeeded(input, &solver_param)) {
      LOG(INFO) << "File already in latest proto format: " << input;
    }
    crema::WriteProtoToTextFile(solver_param, output);
    LOG(INFO) << "Wrote upgraded SolverParameter text proto to " << output;
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
  return 0;
}
