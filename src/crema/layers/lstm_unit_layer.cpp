#include "crema/layers/lstm_unit_layer.hpp"

#include <cmath>

namespace crema {

namespace {

template <typename Dtype>
Dtype Sigmoid(Dtype x) {
  return Dtype(1) / (Dtype(1) + std::exp(-x));
}

}  // namespace

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& previous_cell = *bottom[0];
  CREMA_LAYER_REQUIRE(previous_cell.num_axes() == 3 && previous_cell.shape(0) == 1,
                      "the previous cell state (bottom 0) must be 1 x N x D; got shape "
                          << previous_cell.shape_string());
  num_streams_ = previous_cell.shape(1);
  hidden_dim_ = previous_cell.shape(2);
  const std::vector<int> gates_shape{1, num_streams_, 4 * hidden_dim_};
  CREMA_LAYER_REQUIRE(bottom[1]->shape() == gates_shape,
                      "the gate inputs (bottom 1) must be 1 x N x 4D = 1 x "
                          << num_streams_ << " x " << 4 * hidden_dim_ << "; got shape "
                          << bottom[1]->shape_string());
  CREMA_LAYER_REQUIRE(bottom[2]->shape() == std::vector<int>({1, num_streams_}),
                      "cont (bottom 2) must be 1 x N = 1 x " << num_streams_ << "; got shape "
                                                             << bottom[2]->shape_string());
  // Backward needs c_{t-1} and the gates as they were.
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      CREMA_LAYER_REQUIRE(top[i] != bottom[j],
                          "cannot compute in place: top " << i << " is bottom " << j);
    }
  }
  top[0]->ReshapeLike(previous_cell);
  top[1]->ReshapeLike(previous_cell);
  gate_activations_.ReshapeLike(*bottom[1]);
}

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const int dim = hidden_dim_;
  const Dtype* previous_cell = bottom[0]->cpu_data();
  const Dtype* gate_inputs = bottom[1]->cpu_data();
  const Dtype* cont = bottom[2]->cpu_data();
  Dtype* activations = gate_activations_.mutable_cpu_data();
  Dtype* cell = top[0]->mutable_cpu_data();
  Dtype* hidden = top[1]->mutable_cpu_data();
  for (int n = 0; n < num_streams_; ++n) {
    const Dtype* gate_in = gate_inputs + n * 4 * dim;
    Dtype* gate = activations + n * 4 * dim;
    for (int d = 0; d < dim; ++d) {
      const Dtype input_gate = Sigmoid(gate_in[d]);
      const Dtype forget_gate = Sigmoid(gate_in[dim + d]);
      const Dtype output_gate = Sigmoid(gate_in[2 * dim + d]);
      const Dtype candidate = std::tanh(gate_in[3 * dim + d]);
      gate[d] = input_gate;
      gate[dim + d] = forget_gate;
      gate[2 * dim + d] = output_gate;
      gate[3 * dim + d] = candidate;
      const int index = n * dim + d;
      cell[index] = cont[n] * forget_gate * previous_cell[index] + input_gate * candidate;
      hidden[index] = output_gate * std::tanh(cell[index]);
    }
  }
}

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  CREMA_LAYER_REQUIRE(!propagate_down[2],
                      "cannot backpropagate to cont (bottom 2): the sequence continuation "
                      "indicators have no gradient");
  if (!propagate_down[0] && !propagate_down[1]) return;
  const int dim = hidden_dim_;
  const Dtype* previous_cell = bottom[0]->cpu_data();
  const Dtype* cont = bottom[2]->cpu_data();
  const Dtype* activations = gate_activations_.cpu_data();
  const Dtype* cell = top[0]->cpu_data();
  const Dtype* cell_diff = top[0]->cpu_diff();
  const Dtype* hidden_diff = top[1]->cpu_diff();
  Dtype* previous_cell_diff = propagate_down[0] ? bottom[0]->mutable_cpu_diff() : nullptr;
  Dtype* gate_input_diff = propagate_down[1] ? bottom[1]->mutable_cpu_diff() : nullptr;
  for (int n = 0; n < num_streams_; ++n) {
    const Dtype* gate = activations + n * 4 * dim;
    for (int d = 0; d < dim; ++d) {
      const int index = n * dim + d;
      const Dtype input_gate = gate[d];
      const Dtype forget_gate = gate[dim + d];
      const Dtype output_gate = gate[2 * dim + d];
      const Dtype candidate = gate[3 * dim + d];
      const Dtype tanh_cell = std::tanh(cell[index]);
      // c_t reaches the loss directly and through h_t.
      const Dtype total_cell_diff =
          cell_diff[index] + hidden_diff[index] * output_gate * (Dtype(1) - tanh_cell * tanh_cell);
      if (previous_cell_diff) {
        previous_cell_diff[index] = total_cell_diff * cont[n] * forget_gate;
      }
      if (gate_input_diff) {
        Dtype* gate_diff = gate_input_diff + n * 4 * dim;
        gate_diff[d] = total_cell_diff * candidate * input_gate * (Dtype(1) - input_gate);
        gate_diff[dim + d] = total_cell_diff * cont[n] * previous_cell[index] * forget_gate *
                             (Dtype(1) - forget_gate);
        gate_diff[2 * dim + d] =
            hidden_diff[index] * tanh_cell * output_gate * (Dtype(1) - output_gate);
        gate_diff[3 * dim + d] = total_cell_diff * input_gate * (Dtype(1) - candidate * candidate);
      }
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(LSTMUnitLayer);
#endif

INSTANTIATE_CLASS(LSTMUnitLayer);
REGISTER_LAYER_CLASS(LSTMUnit);

}  // namespace crema
