#include "crema/cudnn/cudnn_sigmoid_layer.hpp"

#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
void CudnnSigmoidLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  SigmoidLayer<Dtype>::Reshape(bottom, top);
  body_.Reshape(bottom[0]->count());
}

template <typename Dtype>
void CudnnSigmoidLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  if (!body_.ready()) return SigmoidLayer<Dtype>::Forward_gpu(bottom, top);
  body_.Forward(bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

template <typename Dtype>
void CudnnSigmoidLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  if (!body_.ready()) return SigmoidLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  body_.Backward(top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->gpu_data(),
                 bottom[0]->mutable_gpu_diff());
}

INSTANTIATE_CLASS(CudnnSigmoidLayer);
REGISTER_CUDNN_LAYER(Sigmoid);

}  // namespace crema
