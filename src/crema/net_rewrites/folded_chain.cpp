#include "crema/net_rewrites/folded_chain.hpp"

#include <utility>

namespace crema {

FoldedChain::FoldedChain(std::vector<std::shared_ptr<Layer<float>>> plain,
                         std::shared_ptr<Layer<float>> folded, std::function<bool()> ready, Run run,
                         std::vector<Blob<float>*> bottom, Blob<float>* blob)
    : plain_(std::move(plain)),
      folded_(std::move(folded)),
      ready_(std::move(ready)),
      run_(std::move(run)),
      bottom_(std::move(bottom)),
      blob_vec_{blob} {}

std::vector<std::vector<int>> FoldedChain::Shapes() const {
  std::vector<std::vector<int>> shapes;
  for (const Blob<float>* blob : bottom_) shapes.push_back(blob->shape());
  shapes.push_back(blob_vec_[0]->shape());
  return shapes;
}

bool FoldedChain::ShapesAsReshaped() const {
  if (reshaped_.size() != bottom_.size() + 1) return false;
  for (size_t b = 0; b < bottom_.size(); ++b) {
    if (bottom_[b]->shape() != reshaped_[b]) return false;
  }
  return blob_vec_[0]->shape() == reshaped_.back();
}

void FoldedChain::Reshape(int slot) {
  if (slot == 0) {
    shapes_unchanged_ = ShapesAsReshaped();
    if (shapes_unchanged_) return;
    plain_[0]->Reshape(bottom_, blob_vec_);
    folded_->Reshape(bottom_, blob_vec_);
    reshaped_ = Shapes();
    return;
  }
  if (!shapes_unchanged_) plain_[slot]->Reshape(blob_vec_, blob_vec_);
}

void FoldedChain::PlainForward(int slot) { plain_[slot]->Forward(Bottoms(slot), blob_vec_); }

void FoldedChain::Forward(int slot) {
  if (slot == 0) {
    if (Context::mode() == Context::CPU && ready_()) {
      run_(bottom_, blob_vec_);
      plain_through_ = kFolded;
    } else {
      PlainForward(0);
      plain_through_ = 0;
    }
    return;
  }
  if (plain_through_ == kFolded) return;  // the folded pass did this slot's work
  PlainForward(slot);
  plain_through_ = slot;
}

void FoldedChain::FinishForward(int end) {
  if (plain_through_ != kFolded) return;  // the slots up to `end` ran plainly
  for (int slot = 0; slot <= end; ++slot) PlainForward(slot);
  plain_through_ = end;
}

void FoldedChain::Backward(int slot, const std::vector<bool>& propagate_down) {
  if (plain_through_ == kFolded) {
    for (int s = 0; s < size(); ++s) PlainForward(s);
    plain_through_ = size() - 1;
  }
  plain_[slot]->Backward(blob_vec_, propagate_down, Bottoms(slot));
}

FoldedLayer::FoldedLayer(std::shared_ptr<FoldedChain> chain, int slot)
    : Layer<float>(chain->plain(slot).layer_param()), chain_(std::move(chain)), slot_(slot) {
  Layer<float>& plain = chain_->plain(slot_);
  blobs_ = plain.blobs();
  for (size_t p = 0; p < blobs_.size(); ++p) {
    set_param_propagate_down(static_cast<int>(p), plain.param_propagate_down(static_cast<int>(p)));
  }
}

void FoldedLayer::Reshape(const std::vector<Blob<float>*>&, const std::vector<Blob<float>*>&) {
  chain_->Reshape(slot_);
}

void FoldedLayer::Forward_cpu(const std::vector<Blob<float>*>&, const std::vector<Blob<float>*>&) {
  chain_->Forward(slot_);
}

void FoldedLayer::Forward_gpu(const std::vector<Blob<float>*>&, const std::vector<Blob<float>*>&) {
  chain_->Forward(slot_);
}

void FoldedLayer::Backward_cpu(const std::vector<Blob<float>*>&,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob<float>*>&) {
  chain_->Backward(slot_, propagate_down);
}

void FoldedLayer::Backward_gpu(const std::vector<Blob<float>*>&,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob<float>*>&) {
  chain_->Backward(slot_, propagate_down);
}

}  // namespace crema
