// Slice: cuts its bottom along one axis (axis, or the legacy slice_dim) into
// its tops, at the given slice_points or, without them, into equal parts.
// Backward puts each top's gradient back in its place.
#ifndef CREMA_LAYERS_SLICE_LAYER_HPP_
#define CREMA_LAYERS_SLICE_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class SliceLayer : public Layer<Dtype> {
 public:
  explicit SliceLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Slice"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }

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
  // The slicing axis for this bottom, in [0, num_axes).
  int SliceAxis(const Blob<Dtype>& bottom) const;
  // Each top's size along the slicing axis.
  std::vector<int> SliceSizes(int axis_size, int num_tops) const;

  int slice_axis_ = 1;
  // The blobs viewed as outer_count_ x (size along the axis) x inner_count_.
  int outer_count_ = 0;
  int inner_count_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_SLICE_LAYER_HPP_
