#include "crema/layers/lstm_unit_layer.hpp"

namespace crema {

template <typename Dtype>
__device__ Dtype DeviceSigmoid(Dtype x) {
  return Dtype(1) / (Dtype(1) + exp(-x));
}

// Over all N * 4D gate inputs: sigmoid for the three gates, tanh for the
// candidate.
template <typename Dtype>
__global__ void LSTMGateActivations(const int64_t n, const int dim, const Dtype* gate_inputs,
                                    Dtype* activations) {
  CUDA_KERNEL_LOOP(index, n) {
    const int gate = static_cast<int>((index % (4 * dim)) / dim);
    const Dtype x = gate_inputs[index];
    activations[index] = gate < 3 ? DeviceSigmoid(x) : tanh(x);
  }
}

template <typename Dtype>
__global__ void LSTMUnitForward(const int64_t n, const int dim, const Dtype* previous_cell,
                                const Dtype* activations, const Dtype* cont, Dtype* cell,
                                Dtype* hidden) {
  CUDA_KERNEL_LOOP(index, n) {
    const int64_t stream = index / dim;
    const int d = static_cast<int>(index % dim);
    const Dtype* gate = activations + stream * 4 * dim;
    const Dtype input_gate = gate[d];
    const Dtype forget_gate = gate[dim + d];
    const Dtype output_gate = gate[2 * dim + d];
    const Dtype candidate = gate[3 * dim + d];
    const Dtype c = cont[stream] * forget_gate * previous_cell[index] + input_gate * candidate;
    cell[index] = c;
    hidden[index] = output_gate * tanh(c);
  }
}

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const int gate_count = bottom[1]->count();
  LSTMGateActivations<Dtype><<<CREMA_GET_BLOCKS(gate_count), CREMA_CUDA_NUM_THREADS>>>(
      gate_count, hidden_dim_, bottom[1]->gpu_data(), gate_activations_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
  const int count = top[0]->count();
  LSTMUnitForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, hidden_dim_, bottom[0]->gpu_data(), gate_activations_.gpu_data(),
      bottom[2]->gpu_data(), top[0]->mutable_gpu_data(), top[1]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

// previous_cell_diff or gate_input_diff is null where not wanted.
template <typename Dtype>
__global__ void LSTMUnitBackward(const int64_t n, const int dim, const Dtype* previous_cell,
                                 const Dtype* activations, const Dtype* cont, const Dtype* cell,
                                 const Dtype* cell_diff, const Dtype* hidden_diff,
                                 Dtype* previous_cell_diff, Dtype* gate_input_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int64_t stream = index / dim;
    const int d = static_cast<int>(index % dim);
    const Dtype* gate = activations + stream * 4 * dim;
    const Dtype input_gate = gate[d];
    const Dtype forget_gate = gate[dim + d];
    const Dtype output_gate = gate[2 * dim + d];
    const Dtype candidate = gate[3 * dim + d];
    const Dtype tanh_cell = tanh(cell[index]);
    const Dtype total_cell_diff =
        cell_diff[index] + hidden_diff[index] * output_gate * (Dtype(1) - tanh_cell * tanh_cell);
    if (previous_cell_diff) {
      previous_cell_diff[index] = total_cell_diff * cont[stream] * forget_gate;
    }
    if (gate_input_diff) {
      Dtype* gate_diff = gate_input_diff + stream * 4 * dim;
      gate_diff[d] = total_cell_diff * candidate * input_gate * (Dtype(1) - input_gate);
      gate_diff[dim + d] = total_cell_diff * cont[stream] * previous_cell[index] * forget_gate *
                           (Dtype(1) - forget_gate);
      gate_diff[2 * dim + d] =
          hidden_diff[index] * tanh_cell * output_gate * (Dtype(1) - output_gate);
      gate_diff[3 * dim + d] = total_cell_diff * input_gate * (Dtype(1) - candidate * candidate);
    }
  }
}

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {
  CREMA_LAYER_REQUIRE(!propagate_down[2],
                      "cannot backpropagate to cont (bottom 2): the sequence continuation "
                      "indicators have no gradient");
  if (!propagate_down[0] && !propagate_down[1]) return;
  const int count = top[0]->count();
  LSTMUnitBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, hidden_dim_, bottom[0]->gpu_data(), gate_activations_.gpu_data(),
      bottom[2]->gpu_data(), top[0]->gpu_data(), top[0]->gpu_diff(), top[1]->gpu_diff(),
      propagate_down[0] ? bottom[0]->mutable_gpu_diff() : nullptr,
      propagate_down[1] ? bottom[1]->mutable_gpu_diff() : nullptr);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(LSTMUnitLayer);

}  // namespace crema
