// A layer's top left in oneDNN's blocked layout of 16 channels (nChw16c,
// float) for the next layer to move into the blob as it reads it: a oneDNN
// convolution followed in place by a per-channel Scale hands its output over
// instead of moving it to Caffe's layout itself, and the Scale writes the
// blob (its kept copy) and its own top in that one pass (the net rewrite
// src/crema/net_rewrites/hand_blocked_output.cpp).
// A pass that stops between the two has the producer finish the move.
#ifndef CREMA_DNNL_BLOCKED_OUTPUT_HPP_
#define CREMA_DNNL_BLOCKED_OUTPUT_HPP_

#include "crema/blob.hpp"

namespace crema {

class BlockedOutput {
 public:
  // The producer, after its forward pass: `blocks` holds the top until its
  // next pass.
  void Hand(const float* blocks) { blocks_ = blocks; }
  // The consumer: the blocks if the producer's last pass handed them over
  // and no one took them yet, else null (read the blob).
  const float* Take() {
    const float* blocks = blocks_;
    blocks_ = nullptr;
    return blocks;
  }

 private:
  const float* blocks_ = nullptr;
};

// A layer that can hand its top over (the oneDNN convolutions, plain and
// depthwise).
class BlockedOutputProducer {
 public:
  virtual ~BlockedOutputProducer() = default;
  // Asks the CPU forward passes to leave the top in oneDNN's blocked layout
  // and hand it over where they can (one bottom, a top of 16-channel blocks
  // moved by channel_blocks).
  virtual BlockedOutput* HandOverOutput() = 0;
  // A pass that stops before the taker: moves a top still handed over into
  // the blob.
  virtual void FinishHandedOutput(Blob<float>* top) = 0;
};

}  // namespace crema

#endif  // CREMA_DNNL_BLOCKED_OUTPUT_HPP_
