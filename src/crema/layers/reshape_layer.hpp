// Reshape: gives its bottom a new shape with the same count. The shape
// replaces axes [axis, axis + num_axes) of the bottom (all of them by
// default); a 0 copies the bottom's size at that place and one -1 is
// inferred from the count. The top shares the bottom's data and gradient.
#ifndef CREMA_LAYERS_RESHAPE_LAYER_HPP_
#define CREMA_LAYERS_RESHAPE_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class ReshapeLayer : public Layer<Dtype> {
 public:
  explicit ReshapeLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Reshape"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  // Nothing to compute: Reshape made the top a view of the bottom.
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override {}
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

 private:
  // The top's shape for this bottom, 0s copied and the -1 inferred.
  std::vector<int> TopShape(const Blob<Dtype>& bottom) const;

  // Positions, within the new shape, of the 0s (copied from the bottom) and
  // of the -1 (inferred; -1 when there is none).
  std::vector<int> copy_axes_;
  int inferred_axis_ = -1;
};

}  // namespace crema

#endif  // CREMA_LAYERS_RESHAPE_LAYER_HPP_
