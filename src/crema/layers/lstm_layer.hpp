// LSTM: the long short-term memory layer, unrolled by RecurrentLayer into
// one LSTMUnit per step. With h_0 = c_0 = 0 (or the states carried from the
// previous batch, or exposed bottoms), for each step t:
//   [i' f' o' g'] = W_hc (cont_t * h_{t-1}) + W_xc x_t + b_c [+ W_xc_static x_static]
//   i, f, o = sigmoid(i', f', o'),  g = tanh(g')
//   c_t = cont_t * f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
// The top is h (T x N x num_output); the recurrent states are h and c.
// Learnable blobs, in Caffe's order: W_xc [4 num_output, input],
// b_c [4 num_output], W_xc_static [4 num_output, static input] (with
// x_static only), W_hc [4 num_output, num_output]; the gate rows are ordered
// i, f, o, g.
#ifndef CREMA_LAYERS_LSTM_LAYER_HPP_
#define CREMA_LAYERS_LSTM_LAYER_HPP_

#include <string>
#include <vector>

#include "crema/layers/recurrent_layer.hpp"

namespace crema {

template <typename Dtype>
class LSTMLayer : public RecurrentLayer<Dtype> {
 public:
  explicit LSTMLayer(const LayerParameter& param) : RecurrentLayer<Dtype>(param) {}
  const char* type() const override { return "LSTM"; }

 protected:
  void FillUnrolledNet(NetParameter* net_param) const override;
  std::vector<std::string> RecurrentStateNames() const override { return {"h", "c"}; }
  std::string OutputBlobName() const override { return "h"; }
};

}  // namespace crema

#endif  // CREMA_LAYERS_LSTM_LAYER_HPP_
