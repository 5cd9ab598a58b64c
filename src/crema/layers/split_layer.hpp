// Split: hands its bottom to every top (the net inserts it where one blob
// feeds several layers). The tops share the bottom's data, so nothing is
// copied; backward sums the tops' gradients into the bottom's.
#ifndef CREMA_LAYERS_SPLIT_LAYER_HPP_
#define CREMA_LAYERS_SPLIT_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class SplitLayer : public Layer<Dtype> {
 public:
  explicit SplitLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Split"; }
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
};

}  // namespace crema

#endif  // CREMA_LAYERS_SPLIT_LAYER_HPP_
