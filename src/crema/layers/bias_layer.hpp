// Bias: adds a bias broadcast over the bottom, y = x + b. The bias spans
// bottom[0]'s axes [axis, axis + its number of axes) and is either a second
// bottom or a learned blob of shape bottom[0].shape[axis : axis + num_axes].
#ifndef CREMA_LAYERS_BIAS_LAYER_HPP_
#define CREMA_LAYERS_BIAS_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

// True when operand's shape equals bottom's axes [axis, axis + operand's axes):
// the condition for broadcasting it over bottom (shared with Scale).
template <typename Dtype>
bool ShapeMatchesFromAxis(const Blob<Dtype>& bottom, int axis, const Blob<Dtype>& operand) {
  if (axis + operand.num_axes() > bottom.num_axes()) return false;
  for (int i = 0; i < operand.num_axes(); ++i) {
    if (bottom.shape(axis + i) != operand.shape(i)) return false;
  }
  return true;
}

template <typename Dtype>
class BiasLayer : public Layer<Dtype> {
 public:
  explicit BiasLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Bias"; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }

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
  // The bias's gradient is wanted: as a learned blob (accumulated) or as
  // bottom[1] (overwritten).
  bool BiasGradientWanted(const std::vector<bool>& propagate_down, int num_bottoms) const;

  // bottom[0] viewed as [outer_dim_, bias_dim_, inner_dim_].
  int outer_dim_ = 0;
  int bias_dim_ = 0;
  int inner_dim_ = 0;
  // GPU reduction scratch: per (outer, bias) sums, and ones to reduce with.
  Blob<Dtype> partial_sums_;
  Blob<Dtype> ones_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_BIAS_LAYER_HPP_
