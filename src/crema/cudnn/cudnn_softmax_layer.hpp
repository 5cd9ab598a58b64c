// Softmax on cuDNN: what a Softmax layer with engine DEFAULT or CUDNN is in
// GPU mode in builds with cuDNN. The blob is seen as outer x channels x
// inner values and cuDNN's accurate softmax (the maximum subtracted first,
// as in the reference body) runs over the channels of each position.
#ifndef CREMA_CUDNN_CUDNN_SOFTMAX_LAYER_HPP_
#define CREMA_CUDNN_CUDNN_SOFTMAX_LAYER_HPP_

#include <vector>

#include "crema/cudnn/cudnn.hpp"
#include "crema/layers/softmax_layer.hpp"

namespace crema {

template <typename Dtype>
class CudnnSoftmaxLayer : public SoftmaxLayer<Dtype> {
 public:
  explicit CudnnSoftmaxLayer(const LayerParameter& param) : SoftmaxLayer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  // Whether the current shape runs on cuDNN (else on the CUDA body).
  bool uses_cudnn() const { return ready_; }

 protected:
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  CudnnTensor values_;
  bool ready_ = false;
};

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_SOFTMAX_LAYER_HPP_
