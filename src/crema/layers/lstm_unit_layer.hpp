// LSTMUnit: one step of an LSTM cell, for N streams of D units. Bottoms: the
// previous cell state c_{t-1} [1, N, D], the gate pre-activations [1, N, 4D]
// (per stream, blocks of D for the input, forget and output gates and the
// candidate, in that order) and the continuation indicator cont_t [1, N].
// Tops: the cell state c_t and the hidden state h_t, both [1, N, D]:
//   i, f, o = sigmoid(blocks 1-3),  g = tanh(block 4)
//   c_t = cont_t * f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
// cont_t selects (0 starts a new sequence) and has no gradient.
#ifndef CREMA_LAYERS_LSTM_UNIT_LAYER_HPP_
#define CREMA_LAYERS_LSTM_UNIT_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class LSTMUnitLayer : public Layer<Dtype> {
 public:
  explicit LSTMUnitLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "LSTMUnit"; }
  int ExactNumBottomBlobs() const override { return 3; }
  int ExactNumTopBlobs() const override { return 2; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 2; }

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
  int num_streams_ = 0;  // N
  int hidden_dim_ = 0;   // D
  // The gates after their nonlinearities, laid out like bottom[1]; backward
  // needs them.
  Blob<Dtype> gate_activations_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_LSTM_UNIT_LAYER_HPP_
