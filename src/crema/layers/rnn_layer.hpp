// RNN: the plain (Elman) recurrent layer, unrolled by RecurrentLayer. With
// h_0 = 0 (or the state carried from the previous batch, or an exposed
// bottom), for each step t:
//   h_t = tanh(W_hh (cont_t * h_{t-1}) + W_xh x_t + b_h [+ W_xh_static x_static])
//   o_t = tanh(W_ho h_t + b_o)
// The top is o (T x N x num_output); the recurrent state is h. Learnable
// blobs, in Caffe's order: W_xh [num_output, input], b_h [num_output],
// W_xh_static [num_output, static input] (with x_static only),
// W_hh [num_output, num_output], W_ho [num_output, num_output], b_o [num_output].
#ifndef CREMA_LAYERS_RNN_LAYER_HPP_
#define CREMA_LAYERS_RNN_LAYER_HPP_

#include <string>
#include <vector>

#include "crema/layers/recurrent_layer.hpp"

namespace crema {

template <typename Dtype>
class RNNLayer : public RecurrentLayer<Dtype> {
 public:
  explicit RNNLayer(const LayerParameter& param) : RecurrentLayer<Dtype>(param) {}
  const char* type() const override { return "RNN"; }

 protected:
  void FillUnrolledNet(NetParameter* net_param) const override;
  std::vector<std::string> RecurrentStateNames() const override { return {"h"}; }
  std::string OutputBlobName() const override { return "o"; }
};

}  // namespace crema

#endif  // CREMA_LAYERS_RNN_LAYER_HPP_
