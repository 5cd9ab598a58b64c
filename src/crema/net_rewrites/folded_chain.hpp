// Layers one rewrite computes as one (fold_into_convolutions.cpp: a
// convolution and the per-channel layers in place after it): each keeps its
// slot in the net as a FoldedLayer, a stand-in that wears the original's
// parameter, type and blobs, and the FoldedChain they share decides what
// each slot's pass runs. The rules:
// - A CPU forward pass of the first slot runs the folded computation, which
//   writes the chain's output into the shared blob; the other slots then
//   have nothing left to do.
// - A forward pass that ends inside the chain (the seam, FinishForward)
//   runs the plain layers from the first up to its end, so the blob holds
//   what they would have written; a pass that goes on from a plain slot
//   runs the plain layer of each slot it reaches.
// - A backward pass runs the plain layers forward first where the last
//   pass was folded (their backward passes read what their forward passes
//   kept), then each slot's plain backward pass.
// - Where the folded computation cannot run (no primitive for the shape,
//   GPU mode), every slot runs its plain layer.
// Results differ from the plain layers' by float rounding only. The one
// difference a caller can see otherwise: a pass that starts inside the
// chain right after a folded pass finds the blob holding the chain's
// output and runs nothing for the folded layers, where the plain layers
// would apply themselves to it a second time.
#ifndef CREMA_NET_REWRITES_FOLDED_CHAIN_HPP_
#define CREMA_NET_REWRITES_FOLDED_CHAIN_HPP_

#include <functional>
#include <memory>
#include <vector>

#include "crema/layer.hpp"

namespace crema {

class FoldedChain {
 public:
  // plain: the chain's layers in net order, plain[0] the first on
  // `bottom` (a convolution, pooling or eltwise), the others in place on
  // `blob`; folded: the folded computation, reshaped with the chain; run:
  // its pass alone (no reshape), run where ready() says it can.
  using Run =
      std::function<void(const std::vector<Blob<float>*>&, const std::vector<Blob<float>*>&)>;
  FoldedChain(std::vector<std::shared_ptr<Layer<float>>> plain,
              std::shared_ptr<Layer<float>> folded, std::function<bool()> ready, Run run,
              std::vector<Blob<float>*> bottom, Blob<float>* blob);
  int size() const { return static_cast<int>(plain_.size()); }
  Layer<float>& plain(int slot) { return *plain_[slot]; }
  Layer<float>& folded() { return *folded_; }

  // Reshape runs before every pass (Layer::Forward). Where the chain's
  // bottoms and its blob have the shapes the last reshape left them with,
  // every layer would set what it set then, so nothing runs.
  void Reshape(int slot);
  void Forward(int slot);
  void Backward(int slot, const std::vector<bool>& propagate_down);
  // A forward pass ended at chain slot `end` (before the last).
  void FinishForward(int end);

 private:
  std::vector<std::vector<int>> Shapes() const;
  // Whether the shapes are those of reshaped_ (compared in place: it runs
  // every pass).
  bool ShapesAsReshaped() const;
  // Runs slot's plain forward pass on its bottoms and tops.
  void PlainForward(int slot);
  const std::vector<Blob<float>*>& Bottoms(int slot) const {
    return slot == 0 ? bottom_ : blob_vec_;
  }

  std::vector<std::shared_ptr<Layer<float>>> plain_;
  std::shared_ptr<Layer<float>> folded_;
  std::function<bool()> ready_;
  Run run_;
  std::vector<Blob<float>*> bottom_, blob_vec_;
  // The bottoms' shapes and the blob's after the last reshape of slot 0,
  // and whether this pass's reshape of slot 0 found them so.
  std::vector<std::vector<int>> reshaped_;
  bool shapes_unchanged_ = false;
  // The last slot whose plain forward pass the blob reflects; kFolded after
  // a folded pass (the plain layers' kept state is then stale).
  static constexpr int kFolded = -1;
  int plain_through_ = kFolded;
};

// The stand-in in each slot of a chain.
class FoldedLayer : public Layer<float> {
 public:
  FoldedLayer(std::shared_ptr<FoldedChain> chain, int slot);
  const char* type() const override { return chain_->plain(slot_).type(); }
  FoldedChain& chain() const { return *chain_; }
  void Reshape(const std::vector<Blob<float>*>& bottom,
               const std::vector<Blob<float>*>& top) override;

 protected:
  void Forward_cpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;
  void Forward_gpu(const std::vector<Blob<float>*>& bottom,
                   const std::vector<Blob<float>*>& top) override;
  void Backward_cpu(const std::vector<Blob<float>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<float>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<float>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<float>*>& bottom) override;

 private:
  std::shared_ptr<FoldedChain> chain_;
  const int slot_;
};

}  // namespace crema

#endif  // CREMA_NET_REWRITES_FOLDED_CHAIN_HPP_
