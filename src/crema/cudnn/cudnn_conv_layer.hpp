// Convolution on cuDNN: what a Convolution layer with engine DEFAULT or CUDNN
// is in GPU mode in builds with cuDNN. Its GPU body runs cuDNN's forward,
// backward-data and backward-filter convolutions and its bias sum on the
// blobs as they lie (NCHW), with the groups as cuDNN's group count. It keeps
// Caffe's semantics: parameter gradients accumulate into the diffs, the
// bottom gradient is overwritten. Each direction's algorithm is the first
// that cuDNN's heuristics rank (cudnnGetConvolution*Algorithm_v7) whose
// workspace fits CudnnWorkspaceLimit(), chosen at the first GPU pass of each
// bottom shape; the workspace is the thread's shared one. Arithmetic is plain
// float (or double) FMA: no TF32 and no reduced precision (CUDNN_FMA_MATH).
// Shapes cuDNN's 4-D descriptors cannot hold (not 2-D, a channel axis other
// than 1, more than 2^31 - 1 values) run the CUDA body.
#ifndef CREMA_CUDNN_CUDNN_CONV_LAYER_HPP_
#define CREMA_CUDNN_CUDNN_CONV_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/cudnn/cudnn.hpp"
#include "crema/layers/conv_layer.hpp"

namespace crema {

template <typename Dtype>
class CudnnConvolutionLayer : public ConvolutionLayer<Dtype> {
 public:
  explicit CudnnConvolutionLayer(const LayerParameter& param);
  ~CudnnConvolutionLayer() override;
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
  struct Descriptors;
  // Sets the descriptors for this bottom shape, or none if cuDNN cannot hold it.
  void MakeDescriptors(const Blob<Dtype>& bottom, const Blob<Dtype>& top);
  // Chooses the three algorithms, once per shape; false (and the descriptors
  // dropped: the CUDA body runs) where cuDNN has none within the limit.
  bool ChooseAlgorithms();
  // Each direction's algorithm into the descriptors and its workspace into
  // *bytes; false where none fits `limit`.
  bool ChooseForward(cudnnHandle_t handle, size_t limit, size_t* bytes);
  bool ChooseBackwardData(cudnnHandle_t handle, size_t limit, size_t* bytes);
  bool ChooseBackwardFilter(cudnnHandle_t handle, size_t limit, size_t* bytes);

  std::unique_ptr<Descriptors> descriptors_;
  std::vector<int> descriptor_shape_;
};

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_CONV_LAYER_HPP_
