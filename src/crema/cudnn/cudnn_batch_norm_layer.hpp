// BatchNorm on cuDNN: what a BatchNorm layer with engine DEFAULT or CUDNN is
// in GPU mode in builds with cuDNN. Caffe's BatchNorm normalises without a
// learned scale or shift (cuDNN gets 1 and 0), and keeps its running
// statistics as decayed sums with a scale factor (blobs 0 to 2) where cuDNN
// keeps running averages: with batch statistics the layer hands cuDNN the
// averages (sum / factor) and the weight 1 / new factor, which makes cuDNN's
// update Caffe's, and stores the result back as sums. The variance is the
// batch's (biased) one in the normalisation and the unbiased one in the
// running statistics, in both. The bottom gradient with batch statistics is
// cuDNN's batch-norm backward on the kept normalised output; with global
// statistics it is the top gradient over the standard deviation. A batch of
// a single value per channel with batch statistics runs the CUDA body.
#ifndef CREMA_CUDNN_CUDNN_BATCH_NORM_LAYER_HPP_
#define CREMA_CUDNN_CUDNN_BATCH_NORM_LAYER_HPP_

#include <vector>

#include "crema/cudnn/cudnn.hpp"
#include "crema/layers/batch_norm_layer.hpp"

namespace crema {

template <typename Dtype>
class CudnnBatchNormLayer : public BatchNormLayer<Dtype> {
 public:
  explicit CudnnBatchNormLayer(const LayerParameter& param) : BatchNormLayer<Dtype>(param) {}
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
  // Normalises x into y (distinct arrays) with the batch's statistics and
  // takes them into the running ones.
  void NormalizeWithBatchStatistics(const Dtype* x, Dtype* y);
  // Normalises x into y (distinct arrays) with the running statistics.
  void NormalizeWithGlobalStatistics(const Dtype* x, Dtype* y);

  CudnnTensor values_;       // the bottom as num x channels x spatial x 1
  CudnnTensor per_channel_;  // 1 x channels x 1 x 1
  Blob<Dtype> unit_;         // ones per channel: cuDNN's scale
  Blob<Dtype> nothing_;      // zeros per channel: cuDNN's shift
  // Per channel: the batch mean and 1 / sqrt(variance + eps) the forward pass
  // normalised with (with global statistics, the latter only).
  Blob<Dtype> saved_mean_, saved_inverse_std_;
  // cuDNN's gradients of its scale and shift, which Caffe's layer has not.
  Blob<Dtype> unit_diff_, nothing_diff_;
  bool ready_ = false;
  std::vector<int> prepared_shape_;  // the bottom shape the descriptors are for
};

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_BATCH_NORM_LAYER_HPP_
