// Flatten: merges axes [axis, end_axis] of its bottom into one. The top shares
// the bottom's data and gradient, so nothing is copied either way.
#ifndef CREMA_LAYERS_FLATTEN_LAYER_HPP_
#define CREMA_LAYERS_FLATTEN_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class FlattenLayer : public Layer<Dtype> {
 public:
  explicit FlattenLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Flatten"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  // Nothing to compute: Reshape made the top a view of the bottom.
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override {}
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

 private:
  // Maps an axis parameter to [0, num_axes); out of range is a user error.
  int CanonicalAxis(const Blob<Dtype>& bottom, int axis, const char* name) const;
};

}  // namespace crema

#endif  // CREMA_LAYERS_FLATTEN_LAYER_HPP_
