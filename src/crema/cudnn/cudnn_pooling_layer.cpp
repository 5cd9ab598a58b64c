#include "crema/cudnn/cudnn_pooling_layer.hpp"

#include "crema/cudnn/cudnn_body.hpp"

namespace crema {

template <typename Dtype>
void CudnnPoolingLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  PoolingLayer<Dtype>::Reshape(bottom, top);
  // Reshape runs before every Forward: descriptors only when the shape changes.
  if (bottom[0]->shape() == descriptor_shape_ && top.size() == descriptor_tops_) return;
  descriptor_shape_ = bottom[0]->shape();
  descriptor_tops_ = top.size();
  MakeDescriptors(*bottom[0], top);
}

template <typename Dtype>
void CudnnPoolingLayer<Dtype>::MakeDescriptors(const Blob<Dtype>& bottom,
                                               const std::vector<Blob<Dtype>*>& top) {
  descriptors_.reset();
  const PoolingParameter::PoolMethod method = this->layer_param_.pooling_param().pool();
  if (method == PoolingParameter::STOCHASTIC || top.size() > 1) return;
  if (!FitsCudnn(bottom.count()) || !FitsCudnn(top[0]->count())) return;
  const PoolingGeometry& g = this->geometry_;
  // Every window must lie inside the padded input: Caffe rounds the output
  // size up and clips the windows that run past the padding (an average then
  // divides by what lies inside), which cuDNN does not.
  const auto inside = [](int pooled, int stride, int kernel, int size, int pad) {
    return static_cast<int64_t>(pooled - 1) * stride + kernel <=
           static_cast<int64_t>(size) + 2 * pad;
  };
  if (!inside(g.pooled_height, g.stride_h, g.kernel_h, g.height, g.pad_h) ||
      !inside(g.pooled_width, g.stride_w, g.kernel_w, g.width, g.pad_w)) {
    return;
  }
  std::unique_ptr<Descriptors> d(new Descriptors());
  const cudnnDataType_t type = CudnnType<Dtype>::type;
  d->bottom.Set(type, bottom.num(), bottom.channels(), g.height, g.width);
  d->top.Set(type, bottom.num(), bottom.channels(), g.pooled_height, g.pooled_width);
  // NaN: cuDNN's maximum is NaN where a window holds one; the CUDA body's
  // only where the window's first value is NaN (it skips later ones).
  CUDNN_CHECK(cudnnSetPooling2dDescriptor(
      d->pooling.get(),
      is_max() ? CUDNN_POOLING_MAX_DETERMINISTIC : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
      CUDNN_PROPAGATE_NAN, g.kernel_h, g.kernel_w, g.pad_h, g.pad_w, g.stride_h, g.stride_w));
  // Invariant: with every window inside, cuDNN's output shape is the layer's.
  int n = 0, c = 0, h = 0, w = 0;
  if (cudnnGetPooling2dForwardOutputDim(d->pooling.get(), d->bottom.get(), &n, &c, &h, &w) !=
          CUDNN_STATUS_SUCCESS ||
      h != g.pooled_height || w != g.pooled_width) {
    LOG(WARNING) << "layer '" << this->layer_param_.name()
                 << "': cuDNN's pooling shape differs from the layer's; the CUDA body runs";
    return;
  }
  if (is_max()) forward_top_.ReshapeLike(*top[0]);
  descriptors_ = std::move(d);
}

template <typename Dtype>
void CudnnPoolingLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  if (!descriptors_) return PoolingLayer<Dtype>::Forward_gpu(bottom, top);
  const Descriptors& d = *descriptors_;
  Dtype* top_data = top[0]->mutable_gpu_data();
  CUDNN_CHECK(cudnnPoolingForward(CudnnHandle(), d.pooling.get(), CudnnType<Dtype>::one(),
                                  d.bottom.get(), bottom[0]->gpu_data(), CudnnType<Dtype>::zero(),
                                  d.top.get(), top_data));
  if (is_max()) {
    gpu_memcpy(sizeof(Dtype) * top[0]->count(), top_data, forward_top_.mutable_gpu_data());
  }
}

template <typename Dtype>
void CudnnPoolingLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob<Dtype>*>& bottom) {
  if (!descriptors_) return PoolingLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  const Descriptors& d = *descriptors_;
  // AVE reads neither the output nor the input; cuDNN still takes pointers.
  const Dtype* forward_top = is_max() ? forward_top_.gpu_data() : top[0]->gpu_data();
  CUDNN_CHECK(cudnnPoolingBackward(CudnnHandle(), d.pooling.get(), CudnnType<Dtype>::one(),
                                   d.top.get(), forward_top, d.top.get(), top[0]->gpu_diff(),
                                   d.bottom.get(), bottom[0]->gpu_data(), CudnnType<Dtype>::zero(),
                                   d.bottom.get(), bottom[0]->mutable_gpu_diff()));
}

INSTANTIATE_CLASS(CudnnPoolingLayer);
REGISTER_CUDNN_BODY(Pooling);

}  // namespace crema
