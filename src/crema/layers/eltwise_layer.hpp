// Eltwise: combines bottoms of one shape element by element: their product
// (PROD), weighted sum (SUM, one coeff per bottom, default 1) or maximum
// (MAX; the gradient goes to the bottom that won, the first one on ties).
#ifndef CREMA_LAYERS_ELTWISE_LAYER_HPP_
#define CREMA_LAYERS_ELTWISE_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layer.hpp"
#include "crema/syncedmem.hpp"

namespace crema {

template <typename Dtype>
class EltwiseLayer : public Layer<Dtype> {
 public:
  explicit EltwiseLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Eltwise"; }
  int MinBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }

  // Whether bottom `index` may hold the top's gradient itself (a SUM with
  // coefficient 1 gives it that gradient unchanged), and lets it: the net
  // does so for a bottom whose gradient only the layer that made it reads
  // (a Split's top), saving the copy; redone on every Reshape.
  bool CanLendGradientTo(int index) const {
    return operation_ == EltwiseParameter::SUM && coeffs_[index] == Dtype(1);
  }
  void LendGradientTo(int index) { lent_gradient_bottom_ = index; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 protected:
  EltwiseParameter::EltwiseOp operation_ = EltwiseParameter::SUM;
  std::vector<Dtype> coeffs_;
  // PROD: the gradient of a bottom is the product of the others (stable) or
  // top / bottom (cheaper, but wrong where the bottom is 0).
  bool stable_prod_grad_ = true;
  // MAX: for each element, the index of the bottom that won (ints).
  std::unique_ptr<SyncedMemory> max_index_;
  int lent_gradient_bottom_ = -1;
};

}  // namespace crema

#endif  // CREMA_LAYERS_ELTWISE_LAYER_HPP_
