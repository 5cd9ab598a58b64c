// FixedNeuron (Xilinx's Caffe, fixed_param): the fixed-point quantisation a
// DPU computes, simulated in floating point, as in a deployed (TEST) net. Its
// blob [1] holds the fixed position p (fractional bits; floor taken); step =
// 2^-p, and with bit_width b
//   y = clamp(floor(x / step + 1/2) step, -2^(b-1) step, (2^(b-1) - 1) step)
// (halves rounded up, as the DPU); with follow_data_layer, y = trunc(x /
// step) step, toward zero and unclamped. enable: false copies. Backward
// passes the gradient straight through. The fork's TRAIN phase is its
// calibration (choosing p by fixed_method over batches), which Crema does not
// run: a TRAIN net with an enabled FixedNeuron is refused.
#ifndef CREMA_LAYERS_FIXED_NEURON_LAYER_HPP_
#define CREMA_LAYERS_FIXED_NEURON_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class FixedNeuronLayer : public NeuronLayer<Dtype> {
 public:
  explicit FixedNeuronLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "FixedNeuron"; }

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
  // The step and the saturation bounds from the stored position.
  void ReadPosition(Dtype* step, Dtype* lower, Dtype* upper) const;

  bool enabled_ = true;
  bool truncate_ = false;  // follow_data_layer
  int bit_width_ = 8;
};

}  // namespace crema

#endif  // CREMA_LAYERS_FIXED_NEURON_LAYER_HPP_
