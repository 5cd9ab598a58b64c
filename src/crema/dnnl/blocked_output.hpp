// A layer's top left in oneDNN's blocked layout of 16 channels (nChw16c,
// float) for the next layer to move into the blob as it reads it: a oneDNN
// convolution followed in place by a per-channel Scale hands its output over
// instead of moving it to Caffe's layout itself, and the Scale writes the
// blob (its kept copy) and its own top in that one pass (the net rewrite
// src/crema/net_rewrites/hand_blocked_output.cpp).
// A pass that stops between the two has the producer finish the move.
#ifndef CREMA_DNNL_BLOCKED_OUTPUT_HPP_
#define CREMA_DNNL_BLOCKED_OUTPUT_HPP_

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

}  // namespace crema

#endif  // CREMA_DNNL_BLOCKED_OUTPUT_HPP_
