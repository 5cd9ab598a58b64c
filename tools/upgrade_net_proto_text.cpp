// Rewrites a net prototxt written in an older Caffe format (V0 or V1 layers,
// input fields, ...) in the current format.
//   upgrade_net_proto_text IN.prototxt OUT.prototxt
#include "upgrade_tool.hpp"

int main(int argc, char** argv) {
  return crema::RunUpgradeTool<crema::NetParameter>(
      argc, argv,
      "rewrites a net prototxt in the current format\n"
      "usage: upgrade_net_proto_text IN.prototxt OUT.prototxt",
      {crema::ReadProtoFromTextFile, crema::UpgradeNetAsNeeded, crema::WriteProtoToTextFile,
       "NetParameter text proto"});
}
