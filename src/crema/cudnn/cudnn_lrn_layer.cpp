#include "crema/cudnn/cudnn_lrn_layer.hpp"

#include "crema/cudnn/cudnn_body.hpp"

namespace crema {

template <typename Dtype>
bool CudnnLRNLayer<Dtype>::SettingsFitCudnn() const {
  const LRNParameter& param = this->layer_param_.lrn_param();
  return this->across_channels() && this->local_size_ >= CUDNN_LRN_MIN_N &&
         this->local_size_ <= CUDNN_LRN_MAX_N && param.k() >= CUDNN_LRN_MIN_K &&
         param.beta() >= CUDNN_LRN_MIN_BETA;
}

template <typename Dtype>
void CudnnLRNLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  LRNLayer<Dtype>::Reshape(bottom, top);
  ready_ = SettingsFitCudnn() && FitsCudnn(bottom[0]->count());
  if (!ready_) return;
  const LRNParameter& param = this->layer_param_.lrn_param();
  CUDNN_CHECK(cudnnSetLRNDescriptor(normalization_.get(), this->local_size_, param.alpha(),
                                    param.beta(), param.k()));
  values_.Set(CudnnType<Dtype>::type, this->num_, this->channels_, this->height_, this->width_);
}

template <typename Dtype>
void CudnnLRNLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  if (!ready_) return LRNLayer<Dtype>::Forward_gpu(bottom, top);
  CUDNN_CHECK(cudnnLRNCrossChannelForward(
      CudnnHandle(), normalization_.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, CudnnType<Dtype>::one(),
      values_.get(), bottom[0]->gpu_data(), CudnnType<Dtype>::zero(), values_.get(),
      top[0]->mutable_gpu_data()));
}

template <typename Dtype>
void CudnnLRNLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  if (!ready_) return LRNLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  CUDNN_CHECK(cudnnLRNCrossChannelBackward(
      CudnnHandle(), normalization_.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, CudnnType<Dtype>::one(),
      values_.get(), top[0]->gpu_data(), values_.get(), top[0]->gpu_diff(), values_.get(),
      bottom[0]->gpu_data(), CudnnType<Dtype>::zero(), values_.get(),
      bottom[0]->mutable_gpu_diff()));
}

INSTANTIATE_CLASS(CudnnLRNLayer);
REGISTER_CUDNN_BODY(LRN);

}  // namespace crema
