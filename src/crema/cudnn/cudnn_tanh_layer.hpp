// TanH on cuDNN: what a TanH layer with engine DEFAULT or CUDNN is in GPU
// mode in builds with cuDNN: tanh(x), its gradient from the output.
#ifndef CREMA_CUDNN_CUDNN_TANH_LAYER_HPP_
#define CREMA_CUDNN_CUDNN_TANH_LAYER_HPP_

#include <vector>

#include "crema/cudnn/cudnn_activation.hpp"
#include "crema/layers/tanh_layer.hpp"

namespace crema {

template <typename Dtype>
class CudnnTanHLayer : public TanHLayer<Dtype> {
 public:
  explicit CudnnTanHLayer(const LayerParameter& param)
      : TanHLayer<Dtype>(param), body_(CUDNN_ACTIVATION_TANH) {}
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

#endif  // CREMA_CUDNN_CUDNN_TANH_LAYER_HPP_
