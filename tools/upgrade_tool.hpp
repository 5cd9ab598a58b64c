// The body the three upgrade tools share: read a file, upgrade it from an
// older Caffe format, write it; a bad file or format is one error and exit 1.
#ifndef CREMA_TOOLS_UPGRADE_TOOL_HPP_
#define CREMA_TOOLS_UPGRADE_TOOL_HPP_

#include <gflags/gflags.h>

#include <cstdio>
#include <string>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/io.hpp"
#include "crema/util/upgrade_proto.hpp"

namespace crema {

// How one tool reads, upgrades (true when anything changed) and writes its
// message, and what it calls it in the log ("NetParameter binary proto").
template <typename Message>
struct UpgradeSteps {
  void (*read)(const std::string& filename, google::protobuf::Message* message);
  bool (*upgrade)(const std::string& where, Message* message);
  void (*write)(const google::protobuf::Message& message, const std::string& filename);
  const char* written_as;
};

// usage: the tool's purpose, then "usage: NAME IN OUT".
template <typename Message>
int RunUpgradeTool(int argc, char** argv, const char* usage, const UpgradeSteps<Message>& steps) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(usage);
  GlobalInit(&argc, &argv);
  if (argc != 3) {
    std::fprintf(stderr, "%s\n", usage);
    return 1;
  }
  const std::string input = argv[1];
  const std::string output = argv[2];
  try {
    Message message;
    steps.read(input, &message);
    if (!steps.upgrade(input, &message)) {
      LOG(INFO) << "File already in latest proto format: " << input;
    }
    steps.write(message, output);
    LOG(INFO) << "Wrote upgraded " << steps.written_as << " to " << output;
  } catch (const Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
  return 0;
}

}  // namespace crema

#endif  // CREMA_TOOLS_UPGRADE_TOOL_HPP_
