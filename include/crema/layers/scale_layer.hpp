// Scale: multiplies the bottom by a scale broadcast over it, y = x * s (+ b
// with bias_term). The scale spans bottom[0]'s axes [axis, axis + its number
// of axes) and is either a second bottom or a learned blob of shape
// bottom[0].shape[axis : axis + num_axes]. Learned blobs, in order: the scale
// (when not a bottom), then the bias (with bias_term).
#ifndef CREMA_LAYERS_SCALE_LAYER_HPP_
#define CREMA_LAYERS_SCALE_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layer.hpp"
#include "crema/layers/batch_norm_layer.hpp"
#include "crema/layers/bias_layer.hpp"
#include "crema/util/blocked_output.hpp"

namespace crema {

template <typename Dtype>
class ScaleLayer : public Layer<Dtype> {
 public:
  explicit ScaleLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Scale"; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }

  // Whether the scale is a learned one per channel (axis 1) of `bottom`: what
  // a BatchNorm's normalisation folds into.
  bool ScalesChannelsOf(const Blob<Dtype>& bottom) const;
  // Folds the BatchNorm on stored statistics that runs in place on this
  // layer's (in-place) bottom just before it: on the CPU the pair then makes
  // one pass over the data each way instead of two, y = (x - mean) * (scale /
  // std) + bias, and dx = dy * scale / std. Results differ from the unfolded
  // pair's by float rounding only. Set by the net (Net::FoldIntoScales).
  void FoldBatchNorm(BatchNormLayer<Dtype>* batch_norm);
  bool folds_batch_norm() const { return folded_batch_norm_ != nullptr; }
  // Whether a folded backward pass writes the BatchNorm's bottom gradient
  // (its own and the BatchNorm's in one pass: the default) or this layer's
  // (a backward pass that ends here; set by the net).
  void set_fold_backward(bool fold) { fold_backward_ = fold; }
  // Takes the in-place bottom, when the producer hands it over, in oneDNN's
  // blocked layout: a float CPU forward pass then moves it into the blob
  // (the kept copy) and writes the top in one pass, as ChannelBlocksToPlain
  // and the plane loop would, bit for bit. Set by the net.
  void TakeBottomFrom(BlockedOutput* producer) { blocked_bottom_ = producer; }
  bool takes_blocked_bottom() const { return blocked_bottom_ != nullptr; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  void CreateLearnedScale(const std::vector<Blob<Dtype>*>& bottom);
  void SetUpBias(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top);
  // Checks that the scale fits bottom[0] and sets the dims below.
  void ComputeDims(const std::vector<Blob<Dtype>*>& bottom);
  Blob<Dtype>* ScaleBlob(const std::vector<Blob<Dtype>*>& bottom) const {
    return bottom.size() > 1 ? bottom[1] : this->blobs_[0].get();
  }
  // The scale's gradient is wanted: as a learned blob (accumulated) or as
  // bottom[1] (overwritten).
  bool ScaleGradientWanted(const std::vector<bool>& propagate_down, int num_bottoms) const;
  // The forward pass from a handed-over blocked bottom, if there is one.
  bool ForwardFromBlocks(const Dtype* mean, const Dtype* std, const Dtype* scale, const Dtype* bias,
                         Dtype* bottom_data, Dtype* top_data);

  // bottom[0] viewed as [outer_dim_, scale_dim_, inner_dim_].
  int outer_dim_ = 0;
  int scale_dim_ = 0;
  int inner_dim_ = 0;

  // With bias_term, a BiasLayer applied in place on the top; its blob is
  // blobs_[bias_param_id_].
  std::unique_ptr<BiasLayer<Dtype>> bias_layer_;
  std::vector<Blob<Dtype>*> bias_bottom_vec_;
  int bias_param_id_ = -1;

  // In place, the bottom's values are overwritten by the forward pass but
  // the scale's gradient needs them: a copy is kept here. Its diff is GPU
  // scratch for the products top_diff * bottom.
  Blob<Dtype> bottom_copy_;
  // Reduction scratch: per (outer, scale) plane sums (the CPU body keeps two
  // rows: the bias's and the scale's), and the GPU's ones to reduce with.
  Blob<Dtype> partial_sums_;
  Blob<Dtype> ones_;
  // The folded BatchNorm, whether the last CPU forward pass applied its
  // normalisation (then bottom_copy_ holds the BatchNorm's input), and
  // whether backward passes write its gradient.
  BatchNormLayer<Dtype>* folded_batch_norm_ = nullptr;
  bool forward_folded_ = false;
  bool fold_backward_ = true;
  BlockedOutput* blocked_bottom_ = nullptr;
  // Per channel: the factor the plane loop multiplies by, and zeros for the
  // bias a folded BatchNorm without one adds.
  std::vector<Dtype> channel_factors_, zeros_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_SCALE_LAYER_HPP_
