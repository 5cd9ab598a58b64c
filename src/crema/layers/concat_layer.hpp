// Concat: joins its bottoms along one axis (axis, or the legacy concat_dim);
// every other axis must agree. Backward hands each bottom its part of the
// top's gradient.
#ifndef CREMA_LAYERS_CONCAT_LAYER_HPP_
#define CREMA_LAYERS_CONCAT_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class ConcatLayer : public Layer<Dtype> {
 public:
  explicit ConcatLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Concat"; }
  int MinBottomBlobs() const override { return 1; }
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
  // The concatenation axis for this bottom, in [0, num_axes).
  int ConcatAxis(const Blob<Dtype>& bottom) const;

  int concat_axis_ = 1;
  // The blobs viewed as outer_count_ x (size along the axis) x inner_count_.
  int outer_count_ = 0;
  int inner_count_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_CONCAT_LAYER_HPP_
