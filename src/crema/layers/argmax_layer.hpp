// ArgMax: the indices (and optionally the values) of the top_k largest
// entries. Without `axis`, per item over all of its count(1) values: the top
// is [N, 1, top_k] (padded with 1s to the bottom's number of axes), or
// [N, 2, top_k] holding the indices then the values when out_max_val. With
// `axis`, that axis is replaced by top_k and the top holds the values if
// out_max_val, else the indices. Ties go to the lower index. No gradient.
#ifndef CREMA_LAYERS_ARGMAX_LAYER_HPP_
#define CREMA_LAYERS_ARGMAX_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class ArgMaxLayer : public Layer<Dtype> {
 public:
  explicit ArgMaxLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "ArgMax"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  // Indices are not differentiable: there is nothing to propagate.
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

  bool out_max_val_ = false;
  int top_k_ = 1;
  bool has_axis_ = false;
  int axis_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_ARGMAX_LAYER_HPP_
