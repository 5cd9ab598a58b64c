// The engine fields a file names for Caffe's runtimes (CAFFE, CUDNN, Intel's
// MKL2017 and MKLDNN) are hints to those runtimes, written to keep cuDNN off
// a depthwise convolution or to pick Intel's kernels; under the net's
// engine_mode FASTEST (the default) they choose no body in Crema, so a
// published file runs as fast as the same file without them.
#ifndef CREMA_FORMAT_ENGINE_HINTS_HPP_
#define CREMA_FORMAT_ENGINE_HINTS_HPP_

#include "crema/proto/crema.pb.h"

namespace crema {

// Sets every such engine field of the layer's parameter messages to DEFAULT
// (Crema's own DNNL stays); returns how many it changed.
int ReadEngineHintsAsDefault(LayerParameter* layer);

}  // namespace crema

#endif  // CREMA_FORMAT_ENGINE_HINTS_HPP_
