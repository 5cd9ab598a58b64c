// Rewrites a solver prototxt written in an older Caffe format (the
// solver_type enum, nets embedded in V1 format) in the current format.
//   upgrade_solver_proto_text IN.prototxt OUT.prototxt
#include "upgrade_tool.hpp"

int main(int argc, char** argv) {
  return crema::RunUpgradeTool<crema::SolverParameter>(
      argc, argv,
      "rewrites a solver prototxt in the current format\n"
      "usage: upgrade_solver_proto_text IN.prototxt OUT.prototxt",
      {crema::ReadProtoFromTextFile, crema::UpgradeSolverAsNeeded, crema::WriteProtoToTextFile,
       "SolverParameter text proto"});
}
