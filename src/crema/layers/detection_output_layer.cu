#include "crema/layers/detection_output_layer.hpp"

namespace crema {

// Sorting and greedy NMS are sequential: the GPU body reads the bottoms back
// to the host and runs the CPU body.
template <typename Dtype>
void DetectionOutputLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  Forward_cpu(bottom, top);
}

template <typename Dtype>
void DetectionOutputLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                               const std::vector<bool>& propagate_down,
                                               const std::vector<Blob<Dtype>*>& bottom) {
  Backward_cpu(top, propagate_down, bottom);
}

INSTANTIATE_LAYER_GPU_FUNCS(DetectionOutputLayer);

}  // namespace crema
