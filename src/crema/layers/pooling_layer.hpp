// Pooling: MAX, AVE or STOCHASTIC over 2-D windows of each channel plane of a
// 4-D blob (num, channels, height, width). MAX may write a second top holding
// the argmax of each window as an index into the input plane.
#ifndef CREMA_LAYERS_POOLING_LAYER_HPP_
#define CREMA_LAYERS_POOLING_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layer.hpp"
#include "crema/syncedmem.hpp"

namespace crema {

// Where the windows lie: one plain struct so CPU loops and CUDA kernels take
// the same description by value.
struct PoolingGeometry {
  int height, width;
  int pooled_height, pooled_width;
  int kernel_h, kernel_w;
  int stride_h, stride_w;
  int pad_h, pad_w;
};

template <typename Dtype>
class PoolingLayer : public Layer<Dtype> {
 public:
  explicit PoolingLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "Pooling"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  // Only MAX has the argmax top.
  int MaxTopBlobs() const override {
    return this->layer_param_.pooling_param().pool() == PoolingParameter::MAX ? 2 : 1;
  }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 protected:
  void ReadWindowParameters(const PoolingParameter& param);
  void ForwardMaxCpu(const Blob<Dtype>& bottom, const std::vector<Blob<Dtype>*>& top);
  void ForwardAveCpu(const Blob<Dtype>& bottom, Blob<Dtype>* top);
  void ForwardStochasticTrainCpu(const Blob<Dtype>& bottom, Blob<Dtype>* top);
  void ForwardStochasticTestCpu(const Blob<Dtype>& bottom, Blob<Dtype>* top);
  // MAX and STOCHASTIC: each output's gradient goes to the position it took.
  void BackwardSelectedCpu(const Blob<Dtype>& top, Blob<Dtype>* bottom);
  void BackwardAveCpu(const Blob<Dtype>& top, Blob<Dtype>* bottom);
  // Stochastic pooling samples only while training; its gradient exists only
  // for the sample taken there.
  void RequireTrainPhaseForStochasticBackward() const;

  PoolingGeometry geometry_{};
  bool global_pooling_ = false;
  // How the output size rounds: round_mode, or OpenCV's ceil_mode.
  PoolingParameter::RoundMode round_mode_ = PoolingParameter::CEIL;
  int num_planes_ = 0;
  // The input-plane index each output took (MAX, and STOCHASTIC at TRAIN),
  // kept for Backward; -1 for a window that holds no input.
  std::unique_ptr<SyncedMemory> selected_index_;
  // The uniform draws of stochastic pooling, one per output.
  Blob<Dtype> uniforms_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_POOLING_LAYER_HPP_
