#include "crema/cudnn/cudnn_activation_layer.hpp"

#include "crema/cudnn/cudnn_body.hpp"

namespace crema {

template <typename Dtype, template <typename> class Reference, cudnnActivationMode_t kMode>
CudnnActivationLayer<Dtype, Reference, kMode>::CudnnActivationLayer(const LayerParameter& param)
    : Reference<Dtype>(param) {
  CUDNN_CHECK(cudnnSetActivationDescriptor(activation_.get(), kMode, CUDNN_PROPAGATE_NAN, 0.0));
}

template <typename Dtype, template <typename> class Reference, cudnnActivationMode_t kMode>
bool CudnnActivationLayer<Dtype, Reference, kMode>::SettingsFitCudnn() const {
  return kMode != CUDNN_ACTIVATION_RELU || this->layer_param_.relu_param().negative_slope() == 0;
}

template <typename Dtype, template <typename> class Reference, cudnnActivationMode_t kMode>
void CudnnActivationLayer<Dtype, Reference, kMode>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                                            const std::vector<Blob<Dtype>*>& top) {
  Reference<Dtype>::Reshape(bottom, top);
  ready_ = SettingsFitCudnn() && FitsCudnn(bottom[0]->count());
  if (ready_) values_.Set(CudnnType<Dtype>::type, 1, 1, 1, bottom[0]->count());
}

template <typename Dtype, template <typename> class Reference, cudnnActivationMode_t kMode>
void CudnnActivationLayer<Dtype, Reference, kMode>::Forward_gpu(
    const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top) {
  if (!ready_) return Reference<Dtype>::Forward_gpu(bottom, top);
  CUDNN_CHECK(cudnnActivationForward(CudnnHandle(), activation_.get(), CudnnType<Dtype>::one(),
                                     values_.get(), bottom[0]->gpu_data(), CudnnType<Dtype>::zero(),
                                     values_.get(), top[0]->mutable_gpu_data()));
}

// In place, the input and the output are one array, and so are the gradients.
template <typename Dtype, template <typename> class Reference, cudnnActivationMode_t kMode>
void CudnnActivationLayer<Dtype, Reference, kMode>::Backward_gpu(
    const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
    const std::vector<Blob<Dtype>*>& bottom) {
  if (!ready_) return Reference<Dtype>::Backward_gpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  CUDNN_CHECK(cudnnActivationBackward(
      CudnnHandle(), activation_.get(), CudnnType<Dtype>::one(), values_.get(), top[0]->gpu_data(),
      values_.get(), top[0]->gpu_diff(), values_.get(), bottom[0]->gpu_data(),
      CudnnType<Dtype>::zero(), values_.get(), bottom[0]->mutable_gpu_diff()));
}

template class CudnnActivationLayer<float, ReLULayer, CUDNN_ACTIVATION_RELU>;
template class CudnnActivationLayer<double, ReLULayer, CUDNN_ACTIVATION_RELU>;
template class CudnnActivationLayer<float, SigmoidLayer, CUDNN_ACTIVATION_SIGMOID>;
template class CudnnActivationLayer<double, SigmoidLayer, CUDNN_ACTIVATION_SIGMOID>;
template class CudnnActivationLayer<float, TanHLayer, CUDNN_ACTIVATION_TANH>;
template class CudnnActivationLayer<double, TanHLayer, CUDNN_ACTIVATION_TANH>;
REGISTER_CUDNN_BODY(ReLU);
REGISTER_CUDNN_BODY(Sigmoid);
REGISTER_CUDNN_BODY(TanH);

}  // namespace crema
