#include "crema/layers/conv_layer.hpp"

#include <memory>
#include <type_traits>

namespace crema {

template <typename Dtype>
void ConvolutionLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  const Dtype* weights = this->blobs_[0]->cpu_data();
  const Dtype* bias = this->bias_term_ ? this->blobs_[1]->cpu_data() : nullptr;
  for (size_t i = 0; i < bottom.size(); ++i) {
    const Dtype* bottom_data = bottom[i]->cpu_data();
    Dtype* top_data = top[i]->mutable_cpu_data();
    this->ForEachChunk_cpu(
        nullptr, nullptr, [&](ChunkBuffers& buffers, int first, int images, Dtype*, Dtype*) {
          Dtype* top_images = top_data + static_cast<size_t>(first) * this->conv_output_dim_;
          const Dtype* columns = this->InputAsColumns_cpu(
              buffers, bottom_data + static_cast<size_t>(first) * this->conv_input_dim_, images);
          Dtype* output = this->OutputMatrixFor_cpu(buffers, top_images, images);
          this->WeightsTimesColumns_cpu(weights, columns, images, output);
          if (bias) this->AddBias_cpu(bias, images * this->output_spatial_dim_, output);
          this->StoreOutputMatrix_cpu(buffers, images, top_images);
        });
  }
}

template <typename Dtype>
void ConvolutionLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* weights = this->blobs_[0]->cpu_data();
  Dtype* weight_diff =
      this->param_propagate_down(0) ? this->blobs_[0]->mutable_cpu_diff() : nullptr;
  Dtype* bias_diff = this->bias_term_ && this->param_propagate_down(1)
                         ? this->blobs_[1]->mutable_cpu_diff()
                         : nullptr;
  for (size_t i = 0; i < top.size(); ++i) {
    if (!weight_diff && !bias_diff && !propagate_down[i]) continue;
    const Dtype* top_diff = top[i]->cpu_diff();
    const Dtype* bottom_data = bottom[i]->cpu_data();
    Dtype* bottom_diff = propagate_down[i] ? bottom[i]->mutable_cpu_diff() : nullptr;
    this->ForEachChunk_cpu(
        weight_diff, bias_diff,
        [&](ChunkBuffers& buffers, int first, int images, Dtype* part_weight_diff,
            Dtype* part_bias_diff) {
          const size_t input_offset = static_cast<size_t>(first) * this->conv_input_dim_;
          const Dtype* output_diff = this->OutputAsMatrix_cpu(
              buffers, top_diff + static_cast<size_t>(first) * this->conv_output_dim_, images);
          if (part_bias_diff) {
            this->AccumulateBiasDiff_cpu(output_diff, images * this->output_spatial_dim_,
                                         part_bias_diff);
          }
          if (part_weight_diff && this->WeightGradientFromRows()) {
            const Dtype* rows = this->InputAsRows_cpu(buffers, bottom_data + input_offset, images);
            this->AccumulateWeightDiffFromRows_cpu(rows, output_diff, images, part_weight_diff);
          } else if (part_weight_diff) {
            const Dtype* columns =
                this->InputAsColumns_cpu(buffers, bottom_data + input_offset, images);
            this->AccumulateWeightDiff_cpu(columns, output_diff, images, part_weight_diff);
          }
          if (bottom_diff) {
            Dtype* bottom_images = bottom_diff + input_offset;
            this->WeightsTransposedTimesOutput_cpu(
                weights, output_diff, images, this->ColumnsFor_cpu(buffers, bottom_images, images));
            this->StoreColumnsAsInput_cpu(buffers, images, bottom_images);
          }
        });
  }
}

#ifndef CREMA_CUDA
STUB_GPU(ConvolutionLayer);
#endif

INSTANTIATE_CLASS(ConvolutionLayer);

REGISTER_LAYER_CLASS(Convolution);

}  // namespace crema
