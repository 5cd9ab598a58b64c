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
#include "crema/layers/bias_layer.hpp"

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

  // Whether the scale is a learned one per channel (axis 1) of `bottom`.
  bool ScalesChannelsOf(const Blob<Dtype>& bottom) const;

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  // The GPU backward pass where each (outer, scale) plane is large enough
  // for a block of its own: one sweep for the three gradients.
  void PlaneBackward_gpu(const std::vector<Blob<Dtype>*>& top,
                         const std::vector<bool>& propagate_down,
                         const std::vector<Blob<Dtype>*>& bottom);

  // For a twin that normalises first (a BatchNorm's (x - mean) / std folded
  // in, src/crema/net_rewrites/): the forward pass y = (x - mean) * scale /
  // std + bias, mean and std per-channel arrays or both null (y = x * scale
  // + bias), bias per channel or null, in one pass over the planes; with
  // `copy`, the bottom is also copied there.
  void AffinePlanes_cpu(const Dtype* bottom_data, Dtype* top_data, Dtype* copy, const Dtype* mean,
                        const Dtype* std, const Dtype* scale, const Dtype* bias);
  // The backward pass of that map from the forward input (bottom_copy() in
  // place): the scale's and the bias's gradients, and the bottom's, dx = dy
  // * scale / std where bottom_through_std (the map's input's), else dy *
  // scale (this layer's own input's, when mean and std are a BatchNorm's).
  void AffineBackward_cpu(const std::vector<Blob<Dtype>*>& top,
                          const std::vector<bool>& propagate_down,
                          const std::vector<Blob<Dtype>*>& bottom, const Dtype* mean,
                          const Dtype* std, bool bottom_through_std);
  Blob<Dtype>* ScaleBlob(const std::vector<Blob<Dtype>*>& bottom) const {
    return bottom.size() > 1 ? bottom[1] : this->blobs_[0].get();
  }
  // The learned bias, or null.
  Blob<Dtype>* BiasBlob() const {
    return bias_layer_ ? this->blobs_[bias_param_id_].get() : nullptr;
  }
  // In place, the forward pass's input as it was (the backward pass reads it).
  Blob<Dtype>* bottom_copy() { return &bottom_copy_; }
  int outer_dim() const { return outer_dim_; }
  int scale_dim() const { return scale_dim_; }
  int inner_dim() const { return inner_dim_; }

 private:
  void CreateLearnedScale(const std::vector<Blob<Dtype>*>& bottom);
  void SetUpBias(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top);
  // Checks that the scale fits bottom[0] and sets the dims below.
  void ComputeDims(const std::vector<Blob<Dtype>*>& bottom);
  // The scale's gradient is wanted: as a learned blob (accumulated) or as
  // bottom[1] (overwritten).
  bool ScaleGradientWanted(const std::vector<bool>& propagate_down, int num_bottoms) const;
  // One sweep over the planes: dx = dy * factors[channel] where bottom_diff
  // is given, and, where sums_wanted, each plane's sum of dy (partial_sums_
  // row 0) and of dy * (x - mean) (row 1; mean null: 0).
  void BackwardPlanes_cpu(const Dtype* top_diff, const Dtype* bottom_data, const Dtype* mean,
                          bool sums_wanted, Dtype* bottom_diff);
  // Adds the plane sums to the scale's gradient (each divided by std where
  // given) and to the bias's, as asked.
  void AccumulateParamDiffs_cpu(const std::vector<Blob<Dtype>*>& bottom, const Dtype* std,
                                bool scale_wanted, bool bias_wanted);

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
  // Per channel: what the backward pass multiplies dy by.
  std::vector<Dtype> plane_factors_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_SCALE_LAYER_HPP_
