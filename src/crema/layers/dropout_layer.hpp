// Dropout (Srivastava et al., 2014): at TRAIN each element is kept with
// probability 1 - dropout_ratio and zeroed otherwise; at TEST the layer passes
// its input through. Kept values are scaled by 1 / (1 - dropout_ratio) at TRAIN
// so the expected output matches TEST; with the forks' scale_train: false,
// TRAIN keeps values unscaled and TEST multiplies by 1 - dropout_ratio. With
// SegNet's sample_weights_test, TEST drops as TRAIN does (Monte Carlo
// dropout, for Bayesian SegNet's sampled predictions).
#ifndef CREMA_LAYERS_DROPOUT_LAYER_HPP_
#define CREMA_LAYERS_DROPOUT_LAYER_HPP_

#include <memory>
#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class DropoutLayer : public NeuronLayer<Dtype> {
 public:
  explicit DropoutLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Dropout"; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  Dtype dropout_ratio_ = 0.5;
  // The factor on kept values at TRAIN and on every value at TEST.
  Dtype train_scale_ = 1;
  Dtype test_scale_ = 1;
  // Whether elements are dropped: at TRAIN, and at TEST with SegNet's
  // sample_weights_test; otherwise every value is multiplied by test_scale_.
  bool drops_ = false;
  // GPU: a drawn 32-bit integer keeps its element when it is at least this.
  unsigned int uint_threshold_ = 0;
  // The mask of the last TRAIN forward, reused by backward: 0/1 on the CPU,
  // the raw draws (compared with uint_threshold_) on the GPU.
  std::unique_ptr<SyncedMemory> mask_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_DROPOUT_LAYER_HPP_
