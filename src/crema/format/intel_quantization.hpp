// Intel Caffe's quantization_param (its int8 inference): read and checked
// against what Intel's code accepts; Crema computes such a layer in float
// (it has no int8 engine yet), and says so.
#ifndef CREMA_FORMAT_INTEL_QUANTIZATION_HPP_
#define CREMA_FORMAT_INTEL_QUANTIZATION_HPP_

#include "crema/proto/crema.pb.h"

namespace crema {

// Refuses, naming the layer and field, settings Intel's code would not run
// (bit widths outside [1, 32], scales not positive and finite).
void CheckIntelQuantization(const LayerParameter& layer);

}  // namespace crema

#endif  // CREMA_FORMAT_INTEL_QUANTIZATION_HPP_
