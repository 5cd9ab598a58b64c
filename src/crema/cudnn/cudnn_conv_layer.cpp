#include "crema/cudnn/cudnn_conv_layer.hpp"

#include <algorithm>
#include <vector>

#include "crema/cudnn/cudnn_body.hpp"

namespace crema {

template <typename Dtype>
struct CudnnConvolutionLayer<Dtype>::Descriptors {
  CudnnTensor bottom, top, bias;
  CudnnFilter filter;
  CudnnConvolution convolution;
  // Chosen at the first GPU pass of the shape (ChooseAlgorithms).
  bool chosen = false;
  cudnnConvolutionFwdAlgo_t forward{};
  cudnnConvolutionBwdDataAlgo_t backward_data{};
  cudnnConvolutionBwdFilterAlgo_t backward_filter{};
  size_t workspace_bytes = 0;  // the most any of the three takes
};

namespace {

// The first algorithm of cuDNN's ranking (query fills `Perf` records) that
// runs in plain FMA arithmetic (the descriptor's math type; entries ranked
// for tensor-core math are passed over) and whose workspace (`size` tells
// it, for the descriptor) is at most `limit` bytes; false if none is.
template <typename Perf, typename Algo, typename Query, typename Size>
bool FirstFitting(int candidates, const Query& query, const Size& size, size_t limit, Algo* algo,
                  size_t* bytes) {
  std::vector<Perf> ranking(candidates);
  int returned = 0;
  if (query(candidates, &returned, ranking.data()) != CUDNN_STATUS_SUCCESS) return false;
  for (int i = 0; i < returned; ++i) {
    const Perf& perf = ranking[i];
    if (perf.status != CUDNN_STATUS_SUCCESS) continue;
    if (perf.mathType != CUDNN_FMA_MATH && perf.mathType != CUDNN_DEFAULT_MATH) continue;
    size_t needed = 0;
    if (size(perf.algo, &needed) != CUDNN_STATUS_SUCCESS || needed > limit) continue;
    *algo = perf.algo;
    *bytes = needed;
    return true;
  }
  return false;
}

}  // namespace

template <typename Dtype>
CudnnConvolutionLayer<Dtype>::CudnnConvolutionLayer(const LayerParameter& param)
    : ConvolutionLayer<Dtype>(param) {}

template <typename Dtype>
CudnnConvolutionLayer<Dtype>::~CudnnConvolutionLayer() = default;

template <typename Dtype>
void CudnnConvolutionLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  ConvolutionLayer<Dtype>::Reshape(bottom, top);
  if (bottom[0]->shape() == descriptor_shape_) return;
  descriptor_shape_ = bottom[0]->shape();
  MakeDescriptors(*bottom[0], *top[0]);
}

template <typename Dtype>
void CudnnConvolutionLayer<Dtype>::MakeDescriptors(const Blob<Dtype>& bottom,
                                                   const Blob<Dtype>& top) {
  descriptors_.reset();
  if (this->num_spatial_axes_ != 2 || this->channel_axis_ != 1 || bottom.num_axes() != 4) return;
  if (!FitsCudnn(bottom.count()) || !FitsCudnn(top.count()) ||
      !FitsCudnn(this->blobs_[0]->count())) {
    return;
  }
  std::unique_ptr<Descriptors> d(new Descriptors());
  const cudnnDataType_t type = CudnnType<Dtype>::type;
  const int num = this->num_, channels = this->channels_, outputs = this->num_output_;
  d->bottom.Set(type, num, channels, this->input_spatial_shape_[0], this->input_spatial_shape_[1]);
  d->top.Set(type, num, outputs, this->output_spatial_shape_[0], this->output_spatial_shape_[1]);
  if (this->bias_term_) d->bias.Set(type, 1, outputs, 1, 1);
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(d->filter.get(), type, CUDNN_TENSOR_NCHW, outputs,
                                         channels / this->group_, this->kernel_shape_[0],
                                         this->kernel_shape_[1]));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      d->convolution.get(), this->pad_[0], this->pad_[1], this->stride_[0], this->stride_[1],
      this->dilation_[0], this->dilation_[1], CUDNN_CROSS_CORRELATION, type));
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(d->convolution.get(), this->group_));
  CUDNN_CHECK(cudnnSetConvolutionMathType(d->convolution.get(), CUDNN_FMA_MATH));
  // Invariant: cuDNN's output shape is the layer's (both use the same formula).
  int n = 0, c = 0, h = 0, w = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(d->convolution.get(), d->bottom.get(),
                                                    d->filter.get(), &n, &c, &h, &w));
  CHECK(n == num && c == outputs && h == this->output_spatial_shape_[0] &&
        w == this->output_spatial_shape_[1])
      << "layer '" << this->layer_param_.name() << "': cuDNN's output shape " << n << " " << c
      << " " << h << " " << w << " differs from the layer's " << top.shape_string();
  descriptors_ = std::move(d);
}

template <typename Dtype>
bool CudnnConvolutionLayer<Dtype>::ChooseForward(cudnnHandle_t handle, size_t limit,
                                                 size_t* bytes) {
  Descriptors& d = *descriptors_;
  return FirstFitting<cudnnConvolutionFwdAlgoPerf_t>(
      CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
      [&](int count, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
        return cudnnGetConvolutionForwardAlgorithm_v7(handle, d.bottom.get(), d.filter.get(),
                                                      d.convolution.get(), d.top.get(), count,
                                                      returned, perf);
      },
      [&](cudnnConvolutionFwdAlgo_t algo, size_t* needed) {
        return cudnnGetConvolutionForwardWorkspaceSize(
            handle, d.bottom.get(), d.filter.get(), d.convolution.get(), d.top.get(), algo, needed);
      },
      limit, &d.forward, bytes);
}

template <typename Dtype>
bool CudnnConvolutionLayer<Dtype>::ChooseBackwardData(cudnnHandle_t handle, size_t limit,
                                                      size_t* bytes) {
  Descriptors& d = *descriptors_;
  return FirstFitting<cudnnConvolutionBwdDataAlgoPerf_t>(
      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
      [&](int count, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
        return cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, d.filter.get(), d.top.get(),
                                                           d.convolution.get(), d.bottom.get(),
                                                           count, returned, perf);
      },
      [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* needed) {
        return cudnnGetConvolutionBackwardDataWorkspaceSize(
            handle, d.filter.get(), d.top.get(), d.convolution.get(), d.bottom.get(), algo, needed);
      },
      limit, &d.backward_data, bytes);
}

template <typename Dtype>
bool CudnnConvolutionLayer<Dtype>::ChooseBackwardFilter(cudnnHandle_t handle, size_t limit,
                                                        size_t* bytes) {
  Descriptors& d = *descriptors_;
  return FirstFitting<cudnnConvolutionBwdFilterAlgoPerf_t>(
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
      [&](int count, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
        return cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, d.bottom.get(), d.top.get(),
                                                             d.convolution.get(), d.filter.get(),
                                                             count, returned, perf);
      },
      [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* needed) {
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(
            handle, d.bottom.get(), d.top.get(), d.convolution.get(), d.filter.get(), algo, needed);
      },
      limit, &d.backward_filter, bytes);
}

template <typename Dtype>
bool CudnnConvolutionLayer<Dtype>::ChooseAlgorithms() {
  Descriptors& d = *descriptors_;
  if (d.chosen) return true;
  const cudnnHandle_t handle = CudnnHandle();
  const size_t limit = CudnnWorkspaceLimit();
  size_t forward_bytes = 0, data_bytes = 0, filter_bytes = 0;
  if (!ChooseForward(handle, limit, &forward_bytes) ||
      !ChooseBackwardData(handle, limit, &data_bytes) ||
      !ChooseBackwardFilter(handle, limit, &filter_bytes)) {
    LOG(WARNING) << "layer '" << this->layer_param_.name()
                 << "': cuDNN has no algorithm for this shape within " << limit
                 << " bytes of workspace; the CUDA body runs";
    descriptors_.reset();
    return false;
  }
  d.workspace_bytes = std::max({forward_bytes, data_bytes, filter_bytes});
  d.chosen = true;
  return true;
}

template <typename Dtype>
void CudnnConvolutionLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                               const std::vector<Blob<Dtype>*>& top) {
  if (!descriptors_ || !ChooseAlgorithms()) {
    return ConvolutionLayer<Dtype>::Forward_gpu(bottom, top);
  }
  const Descriptors& d = *descriptors_;
  const cudnnHandle_t handle = CudnnHandle();
  void* workspace = CudnnWorkspace(d.workspace_bytes);
  const void* one = CudnnType<Dtype>::one();
  const Dtype* weights = this->blobs_[0]->gpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    Dtype* top_data = top[i]->mutable_gpu_data();
    CUDNN_CHECK(cudnnConvolutionForward(handle, one, d.bottom.get(), bottom[i]->gpu_data(),
                                        d.filter.get(), weights, d.convolution.get(), d.forward,
                                        workspace, d.workspace_bytes, CudnnType<Dtype>::zero(),
                                        d.top.get(), top_data));
    if (this->bias_term_) {
      CUDNN_CHECK(cudnnAddTensor(handle, one, d.bias.get(), this->blobs_[1]->gpu_data(), one,
                                 d.top.get(), top_data));
    }
  }
}

template <typename Dtype>
void CudnnConvolutionLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                                const std::vector<bool>& propagate_down,
                                                const std::vector<Blob<Dtype>*>& bottom) {
  if (!descriptors_ || !ChooseAlgorithms()) {
    return ConvolutionLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
  }
  const Descriptors& d = *descriptors_;
  const cudnnHandle_t handle = CudnnHandle();
  void* workspace = CudnnWorkspace(d.workspace_bytes);
  const void* one = CudnnType<Dtype>::one();
  Dtype* weight_diff =
      this->param_propagate_down(0) ? this->blobs_[0]->mutable_gpu_diff() : nullptr;
  Dtype* bias_diff = this->bias_term_ && this->param_propagate_down(1)
                         ? this->blobs_[1]->mutable_gpu_diff()
                         : nullptr;
  for (size_t i = 0; i < top.size(); ++i) {
    if (!weight_diff && !bias_diff && !propagate_down[i]) continue;
    const Dtype* top_diff = top[i]->gpu_diff();
    // Parameter gradients add to the diffs (beta 1); the bottom's replaces it.
    if (bias_diff) {
      CUDNN_CHECK(cudnnConvolutionBackwardBias(handle, one, d.top.get(), top_diff, one,
                                               d.bias.get(), bias_diff));
    }
    if (weight_diff) {
      CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle, one, d.bottom.get(), bottom[i]->gpu_data(),
                                                 d.top.get(), top_diff, d.convolution.get(),
                                                 d.backward_filter, workspace, d.workspace_bytes,
                                                 one, d.filter.get(), weight_diff));
    }
    if (propagate_down[i]) {
      CUDNN_CHECK(cudnnConvolutionBackwardData(
          handle, one, d.filter.get(), this->blobs_[0]->gpu_data(), d.top.get(), top_diff,
          d.convolution.get(), d.backward_data, workspace, d.workspace_bytes,
          CudnnType<Dtype>::zero(), d.bottom.get(), bottom[i]->mutable_gpu_diff()));
    }
  }
}

INSTANTIATE_CLASS(CudnnConvolutionLayer);
REGISTER_CUDNN_BODY(Convolution);

}  // namespace crema
