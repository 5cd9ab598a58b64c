#include "crema/cudnn/cudnn_relu_layer.hpp"

#include "crema/engine.hpp"

namespace crema {

template <typename Dtype>
void CudnnReLULayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  ReLULayer<Dtype>::Reshape(bottom, top);
  const bool leaky = this->layer_param_.relu_param().negative_slope() != 0;
  body_.Reshape(leaky ? 0 : bottom[0]->count());
}

template <typename Dtype>
void CudnnReLULayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  if (!body_.ready()) return ReLULayer<Dtype>::Forward_gpu(bottom, top);
  body_.Forward(bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

template <typename Dtype>
void CudnnReLULayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  if (!body_.ready()) return ReLULayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  body_.Backward(top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->gpu_data(),
                 bottom[0]->mutable_gpu_diff());
}

INSTANTIATE_CLASS(CudnnReLULayer);
REGISTER_CUDNN_LAYER(ReLU);

}  // namespace crema
