#include "crema/cudnn/cudnn_softmax_layer.hpp"

#include "crema/cudnn/cudnn_body.hpp"

namespace crema {

template <typename Dtype>
void CudnnSoftmaxLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  SoftmaxLayer<Dtype>::Reshape(bottom, top);
  ready_ = FitsCudnn(bottom[0]->count());
  if (ready_) {
    values_.Set(CudnnType<Dtype>::type, this->outer_num_, this->channels_, this->inner_num_, 1);
  }
}

template <typename Dtype>
void CudnnSoftmaxLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  if (!ready_) return SoftmaxLayer<Dtype>::Forward_gpu(bottom, top);
  CUDNN_CHECK(cudnnSoftmaxForward(CudnnHandle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                  CudnnType<Dtype>::one(), values_.get(), bottom[0]->gpu_data(),
                                  CudnnType<Dtype>::zero(), values_.get(),
                                  top[0]->mutable_gpu_data()));
}

template <typename Dtype>
void CudnnSoftmaxLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  if (!ready_) return SoftmaxLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  CUDNN_CHECK(cudnnSoftmaxBackward(
      CudnnHandle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, CudnnType<Dtype>::one(),
      values_.get(), top[0]->gpu_data(), values_.get(), top[0]->gpu_diff(),
      CudnnType<Dtype>::zero(), values_.get(), bottom[0]->mutable_gpu_diff()));
}

INSTANTIATE_CLASS(CudnnSoftmaxLayer);
REGISTER_CUDNN_BODY(Softmax);

}  // namespace crema
