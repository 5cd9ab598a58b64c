#include "crema/layers/conv_layer.hpp"

namespace crema {

template <typename Dtype>
void ConvolutionLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  const Dtype* weights = this->blobs_[0]->gpu_data();
  const Dtype* bias = this->bias_term_ ? this->blobs_[1]->gpu_data() : nullptr;
  for (size_t i = 0; i < bottom.size(); ++i) {
    const Dtype* bottom_data = bottom[i]->gpu_data();
    Dtype* top_data = top[i]->mutable_gpu_data();
    for (int first = 0; first < this->num_; first += this->chunk_images_) {
      const int images = this->ChunkImages(first);
      Dtype* top_images = top_data + static_cast<size_t>(first) * this->conv_output_dim_;
      const Dtype* columns = this->InputAsColumns_gpu(
          bottom_data + static_cast<size_t>(first) * this->conv_input_dim_, images);
      Dtype* output = this->OutputMatrixFor_gpu(top_images, images);
      this->WeightsTimesColumns_gpu(weights, columns, images, output);
      if (bias) this->AddBias_gpu(bias, images * this->output_spatial_dim_, output);
      this->StoreOutputMatrix_gpu(images, top_images);
    }
  }
}

template <typename Dtype>
void ConvolutionLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                           const std::vector<bool>& propagate_down,
                                           const std::vector<Blob<Dtype>*>& bottom) {
  const Dtype* weights = this->blobs_[0]->gpu_data();
  Dtype* weight_diff =
      this->param_propagate_down(0) ? this->blobs_[0]->mutable_gpu_diff() : nullptr;
  Dtype* bias_diff = this->bias_term_ && this->param_propagate_down(1)
                         ? this->blobs_[1]->mutable_gpu_diff()
                         : nullptr;
  for (size_t i = 0; i < top.size(); ++i) {
    if (!weight_diff && !bias_diff && !propagate_down[i]) continue;
    const Dtype* top_diff = top[i]->gpu_diff();
    const Dtype* bottom_data = bottom[i]->gpu_data();
    Dtype* bottom_diff = propagate_down[i] ? bottom[i]->mutable_gpu_diff() : nullptr;
    for (int first = 0; first < this->num_; first += this->chunk_images_) {
      const int images = this->ChunkImages(first);
      const size_t input_offset = static_cast<size_t>(first) * this->conv_input_dim_;
      const Dtype* output_diff = this->OutputAsMatrix_gpu(
          top_diff + static_cast<size_t>(first) * this->conv_output_dim_, images);
      if (bias_diff) {
        this->AccumulateBiasDiff_gpu(output_diff, images * this->output_spatial_dim_, bias_diff);
      }
      if (weight_diff) {
        const Dtype* columns = this->InputAsColumns_gpu(bottom_data + input_offset, images);
        this->AccumulateWeightDiff_gpu(columns, output_diff, images, weight_diff);
      }
      if (bottom_diff) {
        Dtype* bottom_images = bottom_diff + input_offset;
        this->WeightsTransposedTimesOutput_gpu(weights, output_diff, images,
                                               this->ColumnsFor_gpu(bottom_images, images));
        this->StoreColumnsAsInput_gpu(images, bottom_images);
      }
    }
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ConvolutionLayer);

}  // namespace crema
