#include "crema/layers/base_conv_layer.hpp"
#include "crema/util/im2col.hpp"

namespace crema {
namespace {

template <typename Dtype>
__global__ void CopyBlockKernel(const int64_t n, const int cols, const Dtype* source,
                                const int source_stride, Dtype* destination,
                                const int destination_stride) {
  CUDA_KERNEL_LOOP(index, n) {
    const int64_t row = index / cols;
    const int64_t col = index % cols;
    destination[row * destination_stride + col] = source[row * source_stride + col];
  }
}

// The GPU form of CopyBlock_cpu: a rows x cols block between row strides.
template <typename Dtype>
void CopyBlock_gpu(int rows, int cols, const Dtype* source, int source_stride, Dtype* destination,
                   int destination_stride) {
  const int64_t count = static_cast<int64_t>(rows) * cols;
  CopyBlockKernel<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, cols, source, source_stride, destination, destination_stride);
  CUDA_POST_KERNEL_CHECK;
}

}  // namespace

// ---- One image ----

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ImageToColumns_gpu(const Dtype* image, Dtype* columns) const {
  if (use_2d_im2col_) {
    im2col_gpu(image, conv_in_channels_, input_spatial_shape_[0], input_spatial_shape_[1],
               kernel_shape_[0], kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1],
               dilation_[0], dilation_[1], columns);
    return;
  }
  const int* shapes = NdShapes_gpu();
  im2col_nd_gpu(image, num_spatial_axes_, conv_in_channels_ * output_spatial_dim_, shapes,
                shapes + NdColOffset(), shapes + NdKernelOffset(), shapes + NdPadOffset(),
                shapes + NdStrideOffset(), shapes + NdDilationOffset(), columns);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ColumnsToImage_gpu(const Dtype* columns, Dtype* image) const {
  if (use_2d_im2col_) {
    col2im_gpu(columns, conv_in_channels_, input_spatial_shape_[0], input_spatial_shape_[1],
               kernel_shape_[0], kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1],
               dilation_[0], dilation_[1], image);
    return;
  }
  const int* shapes = NdShapes_gpu();
  col2im_nd_gpu(columns, num_spatial_axes_, conv_input_dim_, shapes, shapes + NdColOffset(),
                shapes + NdKernelOffset(), shapes + NdPadOffset(), shapes + NdStrideOffset(),
                shapes + NdDilationOffset(), image);
}

// ---- One chunk ----

template <typename Dtype>
const Dtype* BaseConvolutionLayer<Dtype>::InputAsColumns_gpu(const Dtype* input, int images) {
  if (images == 1 && is_1x1_) return input;
  Dtype* columns = column_buffer_.mutable_gpu_data();
  if (images == 1) {
    ImageToColumns_gpu(input, columns);
    return columns;
  }
  const int positions = images * output_spatial_dim_;
  for (int i = 0; i < images; ++i) {
    const Dtype* image = input + static_cast<size_t>(i) * conv_input_dim_;
    // A 1x1 image is its own columns.
    const Dtype* image_columns = image;
    if (!is_1x1_) {
      ImageToColumns_gpu(image, image_columns_.mutable_gpu_data());
      image_columns = image_columns_.gpu_data();
    }
    CopyBlock_gpu(column_rows_, output_spatial_dim_, image_columns, output_spatial_dim_,
                  columns + i * output_spatial_dim_, positions);
  }
  return columns;
}

template <typename Dtype>
Dtype* BaseConvolutionLayer<Dtype>::ColumnsFor_gpu(Dtype* input, int images) {
  if (images == 1 && is_1x1_) return input;
  return column_buffer_.mutable_gpu_data();
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::StoreColumnsAsInput_gpu(int images, Dtype* input) {
  if (images == 1 && is_1x1_) return;
  const Dtype* columns = column_buffer_.gpu_data();
  if (images == 1) {
    ColumnsToImage_gpu(columns, input);
    return;
  }
  const int positions = images * output_spatial_dim_;
  for (int i = 0; i < images; ++i) {
    Dtype* image = input + static_cast<size_t>(i) * conv_input_dim_;
    Dtype* image_columns = is_1x1_ ? image : image_columns_.mutable_gpu_data();
    CopyBlock_gpu(column_rows_, output_spatial_dim_, columns + i * output_spatial_dim_, positions,
                  image_columns, output_spatial_dim_);
    if (!is_1x1_) ColumnsToImage_gpu(image_columns, image);
  }
}

template <typename Dtype>
const Dtype* BaseConvolutionLayer<Dtype>::OutputAsMatrix_gpu(const Dtype* output, int images) {
  if (images == 1) return output;
  Dtype* matrix = output_matrix_.mutable_gpu_data();
  const int positions = images * output_spatial_dim_;
  for (int i = 0; i < images; ++i) {
    CopyBlock_gpu(conv_out_channels_, output_spatial_dim_,
                  output + static_cast<size_t>(i) * conv_output_dim_, output_spatial_dim_,
                  matrix + i * output_spatial_dim_, positions);
  }
  return matrix;
}

template <typename Dtype>
Dtype* BaseConvolutionLayer<Dtype>::OutputMatrixFor_gpu(Dtype* output, int images) {
  return images == 1 ? output : output_matrix_.mutable_gpu_data();
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::StoreOutputMatrix_gpu(int images, Dtype* output) {
  if (images == 1) return;
  const Dtype* matrix = output_matrix_.gpu_data();
  const int positions = images * output_spatial_dim_;
  for (int i = 0; i < images; ++i) {
    CopyBlock_gpu(conv_out_channels_, output_spatial_dim_, matrix + i * output_spatial_dim_,
                  positions, output + static_cast<size_t>(i) * conv_output_dim_,
                  output_spatial_dim_);
  }
}

// ---- The GEMMs; group g owns a contiguous block of rows of every operand ----

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::WeightsTimesColumns_gpu(const Dtype* weights,
                                                          const Dtype* columns, int images,
                                                          Dtype* output) {
  const int positions = images * output_spatial_dim_;
  const int outputs_per_group = conv_out_channels_ / group_;
  for (int g = 0; g < group_; ++g) {
    gpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, outputs_per_group, positions, kernel_dim_, Dtype(1),
                    weights + g * outputs_per_group * kernel_dim_,
                    columns + static_cast<size_t>(g) * kernel_dim_ * positions, Dtype(0),
                    output + static_cast<size_t>(g) * outputs_per_group * positions);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::WeightsTransposedTimesOutput_gpu(const Dtype* weights,
                                                                   const Dtype* output, int images,
                                                                   Dtype* columns) {
  const int positions = images * output_spatial_dim_;
  const int outputs_per_group = conv_out_channels_ / group_;
  for (int g = 0; g < group_; ++g) {
    gpu_gemm<Dtype>(CblasTrans, CblasNoTrans, kernel_dim_, positions, outputs_per_group, Dtype(1),
                    weights + g * outputs_per_group * kernel_dim_,
                    output + static_cast<size_t>(g) * outputs_per_group * positions, Dtype(0),
                    columns + static_cast<size_t>(g) * kernel_dim_ * positions);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AccumulateWeightDiff_gpu(const Dtype* columns,
                                                           const Dtype* output_diff, int images,
                                                           Dtype* weight_diff) {
  const int positions = images * output_spatial_dim_;
  const int outputs_per_group = conv_out_channels_ / group_;
  for (int g = 0; g < group_; ++g) {
    gpu_gemm<Dtype>(CblasNoTrans, CblasTrans, outputs_per_group, kernel_dim_, positions, Dtype(1),
                    output_diff + static_cast<size_t>(g) * outputs_per_group * positions,
                    columns + static_cast<size_t>(g) * kernel_dim_ * positions, Dtype(1),
                    weight_diff + g * outputs_per_group * kernel_dim_);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AddBias_gpu(const Dtype* bias, int positions, Dtype* values) {
  gpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, num_output_, positions, 1, Dtype(1), bias,
                  bias_multiplier_.gpu_data(), Dtype(1), values);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AccumulateBiasDiff_gpu(const Dtype* diff, int positions,
                                                         Dtype* bias_diff) {
  gpu_gemv<Dtype>(CblasNoTrans, num_output_, positions, Dtype(1), diff, bias_multiplier_.gpu_data(),
                  Dtype(1), bias_diff);
}

// The class is instantiated in base_conv_layer.cpp; these members live here.
#define INSTANTIATE_BASE_CONV_GPU_HELPERS(Dtype)                                                  \
  template void BaseConvolutionLayer<Dtype>::ImageToColumns_gpu(const Dtype*, Dtype*) const;      \
  template void BaseConvolutionLayer<Dtype>::ColumnsToImage_gpu(const Dtype*, Dtype*) const;      \
  template const Dtype* BaseConvolutionLayer<Dtype>::InputAsColumns_gpu(const Dtype*, int);       \
  template Dtype* BaseConvolutionLayer<Dtype>::ColumnsFor_gpu(Dtype*, int);                       \
  template void BaseConvolutionLayer<Dtype>::StoreColumnsAsInput_gpu(int, Dtype*);                \
  template const Dtype* BaseConvolutionLayer<Dtype>::OutputAsMatrix_gpu(const Dtype*, int);       \
  template Dtype* BaseConvolutionLayer<Dtype>::OutputMatrixFor_gpu(Dtype*, int);                  \
  template void BaseConvolutionLayer<Dtype>::StoreOutputMatrix_gpu(int, Dtype*);                  \
  template void BaseConvolutionLayer<Dtype>::WeightsTimesColumns_gpu(const Dtype*, const Dtype*,  \
                                                                     int, Dtype*);                \
  template void BaseConvolutionLayer<Dtype>::WeightsTransposedTimesOutput_gpu(                    \
      const Dtype*, const Dtype*, int, Dtype*);                                                   \
  template void BaseConvolutionLayer<Dtype>::AccumulateWeightDiff_gpu(const Dtype*, const Dtype*, \
                                                                      int, Dtype*);               \
  template void BaseConvolutionLayer<Dtype>::AddBias_gpu(const Dtype*, int, Dtype*);              \
  template void BaseConvolutionLayer<Dtype>::AccumulateBiasDiff_gpu(const Dtype*, int, Dtype*)

INSTANTIATE_BASE_CONV_GPU_HELPERS(float);
INSTANTIATE_BASE_CONV_GPU_HELPERS(double);

}  // namespace crema
