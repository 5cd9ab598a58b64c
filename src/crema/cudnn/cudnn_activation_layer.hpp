// ReLU, Sigmoid and TanH on cuDNN: what those layers are, with engine DEFAULT
// or CUDNN, in GPU mode in builds with cuDNN. One cuDNN activation runs over
// the whole blob (its values in a row: the functions are element-wise),
// forward and backward, in place or not; NaN inputs give NaN outputs, as in
// the reference bodies. The gradients are Caffe's: ReLU's 0 at x <= 0,
// Sigmoid's and TanH's from the output. A leaky ReLU (negative_slope other
// than 0), which cuDNN does not have, runs the CUDA body.
#ifndef CREMA_CUDNN_CUDNN_ACTIVATION_LAYER_HPP_
#define CREMA_CUDNN_CUDNN_ACTIVATION_LAYER_HPP_

#include <vector>

#include "crema/cudnn/cudnn.hpp"
#include "crema/layers/relu_layer.hpp"
#include "crema/layers/sigmoid_layer.hpp"
#include "crema/layers/tanh_layer.hpp"

namespace crema {

// The twin of Reference<Dtype> on cuDNN's activation kMode.
template <typename Dtype, template <typename> class Reference, cudnnActivationMode_t kMode>
class CudnnActivationLayer : public Reference<Dtype> {
 public:
  explicit CudnnActivationLayer(const LayerParameter& param);
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  // Whether the current shape and settings run on cuDNN (else on the CUDA body).
  bool uses_cudnn() const { return ready_; }

 protected:
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // Whether cuDNN computes the layer's settings.
  bool SettingsFitCudnn() const;

  CudnnActivation activation_;
  CudnnTensor values_;
  bool ready_ = false;
};

template <typename Dtype>
using CudnnReLULayer = CudnnActivationLayer<Dtype, ReLULayer, CUDNN_ACTIVATION_RELU>;
template <typename Dtype>
using CudnnSigmoidLayer = CudnnActivationLayer<Dtype, SigmoidLayer, CUDNN_ACTIVATION_SIGMOID>;
template <typename Dtype>
using CudnnTanHLayer = CudnnActivationLayer<Dtype, TanHLayer, CUDNN_ACTIVATION_TANH>;

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_ACTIVATION_LAYER_HPP_
