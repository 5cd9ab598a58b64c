// The crema command-line tool: one binary, one command per action.
//   crema device_query [--gpu=N]
// Later issues add train, test and time.
#include <gflags/gflags.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "crema/common.hpp"
#include "crema/util/thread_pool.hpp"

DEFINE_string(gpu, "", "GPU device ids to use, e.g. '0' or '0,1' or 'all'");

namespace {

using Command = std::function<int()>;

std::map<std::string, Command>& Commands() {
  static std::map<std::string, Command> commands;
  return commands;
}

struct RegisterCommand {
  RegisterCommand(const std::string& name, Command command) { Commands()[name] = command; }
};

// Prints what this build and machine offer: the CUDA devices (or that there
// are none) and the CPU thread budget.
int DeviceQuery() {
  LOG(INFO) << "Crema " << CREMA_VERSION_STRING;
  LOG(INFO) << "CPU threads (budget shared by BLAS and the kernel pool): "
            << crema::ThreadBudget();
#ifdef CPU_ONLY
  LOG(INFO) << "Build: CPU only";
#else
  LOG(INFO) << "Build: CUDA";
#endif
  const int count = crema::Context::DeviceCount();
  LOG(INFO) << "CUDA devices: " << count;
  if (count == 0) return 0;
  if (FLAGS_gpu.empty() || FLAGS_gpu == "all") {
    for (int i = 0; i < count; ++i) {
      crema::Context::SetDevice(i);
      crema::Context::DeviceQuery();
    }
  } else {
    crema::Context::SetDevice(std::stoi(FLAGS_gpu));
    crema::Context::DeviceQuery();
  }
  return 0;
}
RegisterCommand register_device_query("device_query", DeviceQuery);

std::string Usage() {
  std::string usage =
      "command line brew\n"
      "usage: crema <command> <args>\n\n"
      "commands:\n";
  for (const auto& entry : Commands()) usage += "  " + entry.first + "\n";
  return usage;
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetVersionString(CREMA_VERSION_STRING);
  gflags::SetUsageMessage(Usage());
  crema::GlobalInit(&argc, &argv);
  if (argc != 2 || Commands().count(argv[1]) == 0) {
    std::fprintf(stderr, "%s\n", Usage().c_str());
    gflags::ShowUsageWithFlagsRestrict(argv[0], "tools/crema");
    return argc == 1 || (argc == 2 && std::string(argv[1]) == "help") ? 0 : 1;
  }
  try {
    return Commands()[argv[1]]();
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
}
