// Upgrading nets and solvers written in BVLC Caffe's older formats (V0 layers,
// V1 `layers` with enum types, input fields, solver_type) to the current one,
// so old prototxt and .caffemodel files load unchanged.
#ifndef CREMA_UTIL_UPGRADE_PROTO_HPP_
#define CREMA_UTIL_UPGRADE_PROTO_HPP_

#include <string>

#include "crema/proto/crema.pb.h"

namespace crema {

// True when the net uses any deprecated form that UpgradeNetAsNeeded rewrites.
bool NetNeedsUpgrade(const NetParameter& net_param);

// Rewrites a net in the current format, step by step: V0 layers to V1, V1
// data-layer transformation fields to transform_param, V1 `layers` to
// `layer`, input fields to an Input layer, BatchNorm param masks removed.
// Returns true if anything changed. `origin` (a file name) names the net in
// logs and in the Error thrown when a part cannot be upgraded.
bool UpgradeNetAsNeeded(const std::string& origin, NetParameter* net_param);

// True when the solver names its type with the deprecated solver_type enum.
bool SolverNeedsTypeUpgrade(const SolverParameter& solver_param);

// The solver with solver_type replaced by the type string, for a parameter
// made in code (a file read by ReadSolverParamsFromTextFile is upgraded
// already; the nets it embeds are upgraded by the Net that builds each).
// Throws Error on an unknown enum value, or with type given too.
SolverParameter SolverTypeUpgraded(const SolverParameter& solver_param);

// Replaces solver_type by the type string and upgrades the nets the solver
// embeds (net_param, train_net_param, test_net_param). Returns true if
// anything changed; throws Error naming `origin` when it cannot upgrade.
bool UpgradeSolverAsNeeded(const std::string& origin, SolverParameter* solver_param);

// Read a file (errors name the file, see io.hpp) and upgrade what it holds.
void ReadNetParamsFromTextFile(const std::string& filename, NetParameter* net_param);
void ReadNetParamsFromBinaryFile(const std::string& filename, NetParameter* net_param);
void ReadSolverParamsFromTextFile(const std::string& filename, SolverParameter* solver_param);

}  // namespace crema

#endif  // CREMA_UTIL_UPGRADE_PROTO_HPP_
