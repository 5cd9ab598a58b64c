#include "crema/layers/deconv_layer.hpp"

namespace crema {

// The top is the convolution's input: its images are conv_input_dim_ apart,
// the bottom's conv_output_dim_.
template <typename Dtype>
void DeconvolutionLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  const Dtype* weights = this->blobs_[0]->cpu_data();
  const Dtype* bias = this->bias_term_ ? this->blobs_[1]->cpu_data() : nullptr;
  for (size_t i = 0; i < bottom.size(); ++i) {
    const Dtype* bottom_data = bottom[i]->cpu_data();
    Dtype* top_data = top[i]->mutable_cpu_data();
    this->ForEachChunk_cpu(
        nullptr, nullptr, [&](ChunkBuffers& buffers, int first, int images, Dtype*, Dtype*) {
          Dtype* top_images = top_data + static_cast<size_t>(first) * this->conv_input_dim_;
          const Dtype* bottom_matrix = this->OutputAsMatrix_cpu(
              buffers, bottom_data + static_cast<size_t>(first) * this->conv_output_dim_, images);
          this->WeightsTransposedTimesOutput_cpu(weights, bottom_matrix, images,
                                                 this->ColumnsFor_cpu(buffers, top_images, images));
          this->StoreColumnsAsInput_cpu(buffers, images, top_images);
          if (!bias) return;
          for (int n = 0; n < images; ++n) {
            this->AddBias_cpu(bias, this->input_spatial_dim_,
                              top_images + n * this->conv_input_dim_);
          }
        });
  }
}

template <typename Dtype>
void DeconvolutionLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
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
          const Dtype* top_diff_images =
              top_diff + static_cast<size_t>(first) * this->conv_input_dim_;
          const size_t bottom_offset = static_cast<size_t>(first) * this->conv_output_dim_;
          for (int n = 0; part_bias_diff && n < images; ++n) {
            this->AccumulateBiasDiff_cpu(top_diff_images + n * this->conv_input_dim_,
                                         this->input_spatial_dim_, part_bias_diff);
          }
          if (!part_weight_diff && !bottom_diff) return;
          const Dtype* columns = this->InputAsColumns_cpu(buffers, top_diff_images, images);
          if (part_weight_diff) {
            const Dtype* bottom_matrix =
                this->OutputAsMatrix_cpu(buffers, bottom_data + bottom_offset, images);
            this->AccumulateWeightDiff_cpu(columns, bottom_matrix, images, part_weight_diff);
          }
          if (bottom_diff) {
            Dtype* bottom_images = bottom_diff + bottom_offset;
            this->WeightsTimesColumns_cpu(
                weights, columns, images,
                this->OutputMatrixFor_cpu(buffers, bottom_images, images));
            this->StoreOutputMatrix_cpu(buffers, images, bottom_images);
          }
        });
  }
}

#ifndef CREMA_CUDA
STUB_GPU(DeconvolutionLayer);
#endif

INSTANTIATE_CLASS(DeconvolutionLayer);
REGISTER_LAYER_CLASS(Deconvolution);

}  // namespace crema
