// Reduction: collapses every axis from `axis` on into one value per leading
// index, by SUM, ASUM (sum of absolute values), SUMSQ (sum of squares) or MEAN,
// scaled by `coeff`. The top's shape is the bottom's shape[0:axis] (a scalar
// for axis 0).
#ifndef CREMA_LAYERS_REDUCTION_LAYER_HPP_
#define CREMA_LAYERS_REDUCTION_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class ReductionLayer : public Layer<Dtype> {
 public:
  explicit ReductionLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "Reduction"; }
  int ExactNumBottomBlobs() const override { return 1; }
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

  // The factor every reduced value is multiplied by: coeff, divided by the
  // number of reduced elements for MEAN.
  Dtype Scale() const;

  ReductionParameter::ReductionOp operation_ = ReductionParameter::SUM;
  // Number of outputs (the product of the leading axes) and of elements
  // reduced into each.
  int num_outputs_ = 0;
  int reduced_size_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_REDUCTION_LAYER_HPP_
