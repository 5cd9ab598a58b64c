// ReLU on cuDNN: what a ReLU layer with engine DEFAULT or CUDNN is in GPU
// mode in builds with cuDNN: max(x, 0), its gradient 0 at x <= 0. A leaky
// ReLU (negative_slope other than 0), which cuDNN does not have, runs the
// CUDA body.
#ifndef CREMA_CUDNN_CUDNN_RELU_LAYER_HPP_
#define CREMA_CUDNN_CUDNN_RELU_LAYER_HPP_

#include <vector>

#include "crema/cudnn/cudnn_activation.hpp"
#include "crema/layers/relu_layer.hpp"

namespace crema {

template <typename Dtype>
class CudnnReLULayer : public ReLULayer<Dtype> {
 public:
  explicit CudnnReLULayer(const LayerParameter& param)
      : ReLULayer<Dtype>(param), body_(CUDNN_ACTIVATION_RELU) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  // Whether the current shape runs on cuDNN (else on the CUDA body).
  bool uses_cudnn() const { return body_.ready(); }

 protected:
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  CudnnActivationBody<Dtype> body_;
};

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_RELU_LAYER_HPP_
