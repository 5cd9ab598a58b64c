// LRN on cuDNN: what an LRN layer with engine DEFAULT or CUDNN is in GPU mode
// in builds with cuDNN. cuDNN's cross-channel normalisation is Caffe's
// ACROSS_CHANNELS formula, x / (k + alpha / n * sum of x^2 over the n
// channels centred on x)^beta, within cuDNN's ranges (n from 1 to 16, k at
// least 1e-5, beta at least 0.01); WITHIN_CHANNEL and other settings run the
// CUDA body.
#ifndef CREMA_CUDNN_CUDNN_LRN_LAYER_HPP_
#define CREMA_CUDNN_CUDNN_LRN_LAYER_HPP_

#include <vector>

#include "crema/cudnn/cudnn.hpp"
#include "crema/layers/lrn_layer.hpp"

namespace crema {

template <typename Dtype>
class CudnnLRNLayer : public LRNLayer<Dtype> {
 public:
  explicit CudnnLRNLayer(const LayerParameter& param) : LRNLayer<Dtype>(param) {}
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

  CudnnLRN normalization_;
  CudnnTensor values_;
  bool ready_ = false;
};

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_LRN_LAYER_HPP_
