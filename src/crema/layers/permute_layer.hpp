// Permute (SSD, weiliu89/caffe): reorders a blob's axes. The top's axis i is
// the bottom's axis order[i]; the axes order does not name follow, in
// increasing order (so order: 0 2 3 1 turns NCHW into NHWC, and order: 1 alone
// means 1, 0, 2, 3 on a 4-axis bottom). Backward scatters the top's gradient
// back. Not in place: the top must be its own blob.
#ifndef CREMA_LAYERS_PERMUTE_LAYER_HPP_
#define CREMA_LAYERS_PERMUTE_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

// Where each top element comes from: top index t has coordinates
// t / top_steps[i] % top_shape[i] along top axis i, which is bottom axis
// order[i], whose step in the bottom is bottom_steps[order[i]].
struct PermuteIndexing {
  int num_axes = 0;
  int order[kMaxBlobAxes] = {};
  int top_steps[kMaxBlobAxes] = {};
  int bottom_steps[kMaxBlobAxes] = {};
};

template <typename Dtype>
class PermuteLayer : public Layer<Dtype> {
 public:
  explicit PermuteLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Permute"; }
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

 protected:
  // The full order for a bottom of num_axes axes, checked.
  std::vector<int> FullOrder(int num_axes) const;

 private:
  PermuteIndexing indexing_;
  // False when the order is the identity: the data is copied as it is.
  bool need_permute_ = false;
};

// The bottom index that top index t is read from.
#ifdef __CUDACC__
__host__ __device__
#endif
    inline int64_t
    PermutedBottomIndex(const PermuteIndexing& indexing, int64_t t) {
  int64_t bottom_index = 0;
  for (int i = 0; i < indexing.num_axes; ++i) {
    const int64_t coordinate = t / indexing.top_steps[i];
    t %= indexing.top_steps[i];
    bottom_index += coordinate * indexing.bottom_steps[indexing.order[i]];
  }
  return bottom_index;
}

}  // namespace crema

#endif  // CREMA_LAYERS_PERMUTE_LAYER_HPP_
