// Softmax: y = exp(x - max x) / sum exp(x - max x) over one axis (softmax_param
// axis, default 1, the channels), independently at every position of the
// axes before and after it. Subtracting the max keeps exp from overflowing.
#ifndef CREMA_LAYERS_SOFTMAX_LAYER_HPP_
#define CREMA_LAYERS_SOFTMAX_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class SoftmaxLayer : public Layer<Dtype> {
 public:
  explicit SoftmaxLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Softmax"; }
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

  // The shape seen as outer_num_ x channels_ x inner_num_, softmax over the middle.
  int outer_num_ = 0;
  int channels_ = 0;
  int inner_num_ = 0;
  // One value per (outer, inner) position: the max, then the sum of
  // exponentials in forward; <top diff, top data> over the channels in backward.
  Blob<Dtype> per_position_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_SOFTMAX_LAYER_HPP_
