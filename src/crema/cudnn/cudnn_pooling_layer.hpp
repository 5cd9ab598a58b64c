// Pooling on cuDNN: what a Pooling layer with engine DEFAULT or CUDNN is in
// GPU mode in builds with cuDNN. It serves MAX and AVE with one top where
// every window lies inside the padded input: there cuDNN's maximum (over the
// input, not the padding) and its average counting the padding are Caffe's.
// Elsewhere (the argmax top, STOCHASTIC, a window that runs past the padding,
// which Caffe clips) the CUDA body runs.
#ifndef CREMA_CUDNN_CUDNN_POOLING_LAYER_HPP_
#define CREMA_CUDNN_CUDNN_POOLING_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/cudnn/cudnn.hpp"
#include "crema/layers/pooling_layer.hpp"

namespace crema {

template <typename Dtype>
class CudnnPoolingLayer : public PoolingLayer<Dtype> {
 public:
  explicit CudnnPoolingLayer(const LayerParameter& param) : PoolingLayer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  // Whether the current shape runs on cuDNN (else on the CUDA body).
  bool uses_cudnn() const { return static_cast<bool>(descriptors_); }

 protected:
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  struct Descriptors {
    CudnnTensor bottom, top;
    CudnnPooling pooling;
  };
  void MakeDescriptors(const Blob<Dtype>& bottom, const std::vector<Blob<Dtype>*>& top);
  bool is_max() const { return this->layer_param_.pooling_param().pool() == PoolingParameter::MAX; }

  std::unique_ptr<Descriptors> descriptors_;
  std::vector<int> descriptor_shape_;  // the bottom shape they are for
  size_t descriptor_tops_ = 0;
  // MAX: the forward output as written. cuDNN's backward finds each window's
  // maximum by comparing the input with it, and a later layer may change the
  // top in place.
  Blob<Dtype> forward_top_;
};

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_POOLING_LAYER_HPP_
