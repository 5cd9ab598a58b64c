#include "crema/layers/proposal_layer.hpp"

namespace crema {

// Sorting and greedy non-maximum suppression are sequential: the GPU body
// runs the CPU one (the bottoms come to the host, the tops are written there).
template <typename Dtype>
void ProposalLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  Forward_cpu(bottom, top);
}

template <typename Dtype>
void ProposalLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {}

INSTANTIATE_LAYER_GPU_FUNCS(ProposalLayer);

}  // namespace crema
