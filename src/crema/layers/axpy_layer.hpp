// Axpy (hujie-frank/SENet): top = a * x + y, with bottoms a [N, C] (or
// [N, C, 1, ...]), x and y [N, C, ...] of one shape; each image's channel
// scale a[n, c] multiplies every value of x's channel c. SENet uses it to
// join a squeeze-and-excitation branch's channel scales, the residual branch
// and the shortcut in one layer. Gradients: da[n, c] = sum over the channel
// of x * dtop, dx = a * dtop, dy = dtop.
//
// The top may be y's blob (in place); a layer whose top is a or x is refused:
// forward would overwrite what it still reads.
#ifndef CREMA_LAYERS_AXPY_LAYER_HPP_
#define CREMA_LAYERS_AXPY_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class AxpyLayer : public Layer<Dtype> {
 public:
  explicit AxpyLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "Axpy"; }
  int ExactNumBottomBlobs() const override { return 3; }
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
  // a must hold one scale per image and channel of x.
  void CheckScaleShape(const Blob<Dtype>& a, const Blob<Dtype>& x);

  int scales_ = 0;       // N * C: the values of a, the channels of x
  int spatial_dim_ = 0;  // values per channel of x: the count of its axes after 1
};

}  // namespace crema

#endif  // CREMA_LAYERS_AXPY_LAYER_HPP_
