// Filter: keeps the items (slices along axis 0) that a selector marks. The
// last bottom is the selector, shape [N] or [N, 1, ...]: item n is kept where
// its value is non-zero. Each other bottom (N items each) gives one top
// holding its kept items in order; when none is kept, the tops hold 0 items.
// The gradient flows back to the kept items; the others get zero, and the
// selector (a step function) gets none.
#ifndef CREMA_LAYERS_FILTER_LAYER_HPP_
#define CREMA_LAYERS_FILTER_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class FilterLayer : public Layer<Dtype> {
 public:
  explicit FilterLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "Filter"; }
  int MinBottomBlobs() const override { return 2; }
  int MinTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override {
    return bottom_index != static_cast<int>(this->layer_param_.bottom_size()) - 1;
  }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  void CheckShapes(const std::vector<Blob<Dtype>*>& bottom);

  // Indices (along axis 0) of the kept items, in increasing order.
  std::vector<int> kept_items_;
  // False during set-up, when the selector holds no values yet: the tops are
  // then shaped for every item. Later reshapes follow the selector.
  bool selector_ready_ = false;
};

}  // namespace crema

#endif  // CREMA_LAYERS_FILTER_LAYER_HPP_
