// Rewrites a binary net (a .caffemodel: layers and their weights) written in
// an older Caffe format (V0 or V1 layers, input fields, ...) in the current
// format.
//   upgrade_net_proto_binary IN.caffemodel OUT.caffemodel
#include "upgrade_tool.hpp"

int main(int argc, char** argv) {
  return crema::RunUpgradeTool<crema::NetParameter>(
      argc, argv,
      "rewrites a binary net (.caffemodel) in the current format\n"
      "usage: upgrade_net_proto_binary IN.caffemodel OUT.caffemodel",
      {crema::ReadProtoFromBinaryFile, crema::UpgradeNetAsNeeded, crema::WriteProtoToBinaryFile,
       "NetParameter binary proto"});
}
