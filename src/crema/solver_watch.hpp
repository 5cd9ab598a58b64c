// What a solver checks of its training net: that it has a loss to train, and,
// each iteration, that the loss and the gradients are finite numbers. A
// non-finite value is traced to the first layer (in forward order) whose
// output is not finite, else the first (in backward order) whose gradient is
// not, so the message says where it began: NaN in the data shows as the
// data layer.
#ifndef CREMA_SOLVER_WATCH_HPP_
#define CREMA_SOLVER_WATCH_HPP_

#include <string>

#include "crema/net.hpp"
#include "crema/syncedmem.hpp"

namespace crema {

// Fails, naming `origin`, when no output of the net carries a loss weight:
// such a net would "train" without changing a weight.
template <typename Dtype>
void RequireLoss(const Net<Dtype>& net, const std::string& origin);

// Whether every learnable parameter's gradient value is finite: on the CPU
// one pass over the gradients; on a GPU one kernel per gradient, raising
// `flag` (one int, kept by the caller across iterations so that no call
// allocates) on the device, and one copy of it back.
template <typename Dtype>
bool GradientsFinite(const Net<Dtype>& net, SyncedMemory* flag);

// Where the net's values first stop being finite, in words ("" when every
// output and gradient is finite). Reads every blob: for the error path.
template <typename Dtype>
std::string FirstNonFinite(const Net<Dtype>& net);

}  // namespace crema

#endif  // CREMA_SOLVER_WATCH_HPP_
