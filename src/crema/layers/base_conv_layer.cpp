#include "crema/layers/base_conv_layer.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>

#include "crema/filler.hpp"
#include "crema/util/im2col.hpp"
#include "crema/util/math_functions.hpp"
#include "crema/util/thread_pool.hpp"

namespace crema {
namespace {

// Bounds the memory of a chunk's column buffer and output matrix together;
// small images still get many to a GEMM. On the GPU:
constexpr size_t kMaxChunkBytes = 8 << 20;
// On the CPU, half a core's L2 cache: the columns written by im2col are still
// there when the GEMM reads them.
constexpr size_t kMaxCpuChunkBytes = 512 << 10;

int Product(const std::vector<int>& values) {
  return std::accumulate(values.begin(), values.end(), 1, std::multiplies<int>());
}

std::string AxisList(const std::vector<int>& values) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << ")";
  return os.str();
}

// Copies a rows x cols block between buffers with the given row strides: one
// image's rows into (or out of) its place in a chunk's matrix.
template <typename Dtype>
void CopyBlock_cpu(int rows, int cols, const Dtype* source, int source_stride, Dtype* destination,
                   int destination_stride) {
  for (int row = 0; row < rows; ++row) {
    const Dtype* source_row = source + static_cast<size_t>(row) * source_stride;
    std::copy(source_row, source_row + cols,
              destination + static_cast<size_t>(row) * destination_stride);
  }
}

}  // namespace

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                             const std::vector<Blob<Dtype>*>& top) {
  ReadGeometry(*bottom[0]);
  SetUpFilters();
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                          const std::vector<Blob<Dtype>*>& top) {
  ReshapeGeometry(bottom);
  for (size_t i = 0; i < top.size(); ++i) top[i]->Reshape(TopShape(*bottom[i], num_output_));
  ReshapeBuffers();
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ReadGeometry(const Blob<Dtype>& bottom) {
  const ConvolutionParameter& param = this->layer_param_.convolution_param();
  CREMA_LAYER_REQUIRE(param.axis() >= -bottom.num_axes() && param.axis() < bottom.num_axes(),
                      "axis " << param.axis() << " is out of range for a bottom of shape "
                              << bottom.shape_string());
  channel_axis_ = bottom.CanonicalAxisIndex(param.axis());
  num_spatial_axes_ = bottom.num_axes() - channel_axis_ - 1;
  CREMA_LAYER_REQUIRE(num_spatial_axes_ >= 1,
                      "the bottom needs a spatial axis after its channel axis "
                          << channel_axis_ << ", its shape is " << bottom.shape_string());
  channels_ = bottom.shape(channel_axis_);

  kernel_shape_ = ReadPerAxis("kernel_size", "kernel", param.kernel_size(), param.has_kernel_h(),
                              param.has_kernel_w(), param.kernel_h(), param.kernel_w(), -1);
  RequirePositive("kernel_size", kernel_shape_);
  stride_ = ReadPerAxis("stride", "stride", param.stride(), param.has_stride_h(),
                        param.has_stride_w(), param.stride_h(), param.stride_w(), 1);
  RequirePositive("stride", stride_);
  pad_ = ReadPerAxis("pad", "pad", param.pad(), param.has_pad_h(), param.has_pad_w(), param.pad_h(),
                     param.pad_w(), 0);
  dilation_ = ReadPerAxis("dilation", nullptr, param.dilation(), false, false, 0, 0, 1);
  RequirePositive("dilation", dilation_);

  is_1x1_ = true;
  for (int axis = 0; axis < num_spatial_axes_; ++axis) {
    is_1x1_ = is_1x1_ && kernel_shape_[axis] == 1 && stride_[axis] == 1 && pad_[axis] == 0;
  }
  use_2d_im2col_ = num_spatial_axes_ == 2 && !param.force_nd_im2col();
  kernel_size_ = Product(kernel_shape_);
  const int nd_shape_values = 2 * (num_spatial_axes_ + 1) + 4 * num_spatial_axes_;
  nd_shapes_ = std::make_shared<SyncedMemory>(nd_shape_values * sizeof(int));
}

template <typename Dtype>
std::vector<int> BaseConvolutionLayer<Dtype>::ReadPerAxis(
    const char* field, const char* pair_prefix,
    const google::protobuf::RepeatedField<uint32_t>& values, bool has_h, bool has_w,
    uint32_t value_h, uint32_t value_w, int default_value) const {
  if (has_h || has_w) {
    CREMA_LAYER_REQUIRE(num_spatial_axes_ == 2, pair_prefix
                                                    << "_h/" << pair_prefix
                                                    << "_w need 2 spatial axes, the bottom has "
                                                    << num_spatial_axes_);
    CREMA_LAYER_REQUIRE(values.empty(), "give either " << field << " or " << pair_prefix << "_h/"
                                                       << pair_prefix << "_w, not both");
    return {static_cast<int>(value_h), static_cast<int>(value_w)};
  }
  if (values.empty()) {
    CREMA_LAYER_REQUIRE(default_value >= 0, "missing " << field << ": set " << field << " or "
                                                       << pair_prefix << "_h and " << pair_prefix
                                                       << "_w");
    return std::vector<int>(num_spatial_axes_, default_value);
  }
  CREMA_LAYER_REQUIRE(values.size() == 1 || values.size() == num_spatial_axes_,
                      field << " has " << values.size()
                            << " values; expected 1 or one per spatial axis (" << num_spatial_axes_
                            << ")");
  std::vector<int> per_axis(num_spatial_axes_);
  for (int axis = 0; axis < num_spatial_axes_; ++axis) {
    per_axis[axis] = static_cast<int>(values.Get(values.size() == 1 ? 0 : axis));
  }
  return per_axis;
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::RequirePositive(const char* field,
                                                  const std::vector<int>& values) const {
  const bool positive =
      std::all_of(values.begin(), values.end(), [](int value) { return value > 0; });
  CREMA_LAYER_REQUIRE(positive,
                      field << " must be positive on every spatial axis, got " << AxisList(values));
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::SetUpFilters() {
  const ConvolutionParameter& param = this->layer_param_.convolution_param();
  num_output_ = static_cast<int>(param.num_output());
  CREMA_LAYER_REQUIRE(num_output_ > 0, "num_output must be positive, got " << param.num_output());
  group_ = static_cast<int>(param.group());
  CREMA_LAYER_REQUIRE(group_ > 0, "group must be positive, got " << param.group());
  CREMA_LAYER_REQUIRE(channels_ % group_ == 0,
                      "group " << group_ << " must divide the " << channels_ << " input channels");
  CREMA_LAYER_REQUIRE(num_output_ % group_ == 0,
                      "group " << group_ << " must divide num_output " << num_output_);
  bias_term_ = param.bias_term();
  conv_in_channels_ = ReverseDimensions() ? num_output_ : channels_;
  conv_out_channels_ = ReverseDimensions() ? channels_ : num_output_;

  std::vector<int> weight_shape{conv_out_channels_, conv_in_channels_ / group_};
  weight_shape.insert(weight_shape.end(), kernel_shape_.begin(), kernel_shape_.end());
  if (!this->blobs_.empty()) {
    CheckLearnableBlobs(weight_shape);
    return;
  }
  this->blobs_.resize(bias_term_ ? 2 : 1);
  this->blobs_[0] = std::make_shared<Blob<Dtype>>(weight_shape);
  GetFiller<Dtype>(param.weight_filler())->Fill(this->blobs_[0].get());
  if (bias_term_) {
    this->blobs_[1] = std::make_shared<Blob<Dtype>>(std::vector<int>{num_output_});
    GetFiller<Dtype>(param.bias_filler())->Fill(this->blobs_[1].get());
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::CheckLearnableBlobs(const std::vector<int>& weight_shape) const {
  const size_t expected = bias_term_ ? 2 : 1;
  CREMA_LAYER_REQUIRE(this->blobs_.size() == expected,
                      "the model gives "
                          << this->blobs_.size() << " learnable blobs, expected " << expected
                          << (bias_term_ ? " (weights, bias)" : " (weights; bias_term is false)"));
  CREMA_LAYER_REQUIRE(this->blobs_[0]->shape() == weight_shape,
                      "the weight blob has shape " << this->blobs_[0]->shape_string()
                                                   << ", expected "
                                                   << Blob<Dtype>(weight_shape).shape_string());
  if (!bias_term_) return;
  const std::vector<int> bias_shape{num_output_};
  CREMA_LAYER_REQUIRE(this->blobs_[1]->shape() == bias_shape,
                      "the bias blob has shape " << this->blobs_[1]->shape_string() << ", expected "
                                                 << Blob<Dtype>(bias_shape).shape_string());
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ReshapeGeometry(const std::vector<Blob<Dtype>*>& bottom) {
  const Blob<Dtype>& first = *bottom[0];
  CREMA_LAYER_REQUIRE(first.num_axes() == channel_axis_ + 1 + num_spatial_axes_,
                      "the bottom was set up with " << channel_axis_ + 1 + num_spatial_axes_
                                                    << " axes, now has shape "
                                                    << first.shape_string());
  CREMA_LAYER_REQUIRE(first.shape(channel_axis_) == channels_,
                      "the bottom was set up with " << channels_ << " channels, now has shape "
                                                    << first.shape_string());
  for (size_t i = 1; i < bottom.size(); ++i) {
    CREMA_LAYER_REQUIRE(bottom[i]->shape() == first.shape(),
                        "all bottoms must have the same shape: bottom 0 is "
                            << first.shape_string() << ", bottom " << i << " is "
                            << bottom[i]->shape_string());
  }
  num_ = first.count(0, channel_axis_);
  ComputeSpatialShapes(first);
  input_spatial_dim_ = Product(input_spatial_shape_);
  output_spatial_dim_ = Product(output_spatial_shape_);
  column_rows_ = conv_in_channels_ * kernel_size_;
  kernel_dim_ = column_rows_ / group_;
  conv_input_dim_ = conv_in_channels_ * input_spatial_dim_;
  conv_output_dim_ = conv_out_channels_ * output_spatial_dim_;
  StoreNdShapes();
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ComputeSpatialShapes(const Blob<Dtype>& bottom) {
  const std::vector<int> bottom_spatial(bottom.shape().begin() + channel_axis_ + 1,
                                        bottom.shape().end());
  std::vector<int> top_spatial(num_spatial_axes_);
  for (int axis = 0; axis < num_spatial_axes_; ++axis) {
    const int extent = dilation_[axis] * (kernel_shape_[axis] - 1) + 1;
    if (ReverseDimensions()) {
      top_spatial[axis] = stride_[axis] * (bottom_spatial[axis] - 1) + extent - 2 * pad_[axis];
      CREMA_LAYER_REQUIRE(top_spatial[axis] > 0, "the output would have size "
                                                     << top_spatial[axis] << " on spatial axis "
                                                     << axis << " (input " << bottom_spatial[axis]
                                                     << ", kernel extent " << extent << ", pad "
                                                     << pad_[axis] << ")");
    } else {
      const int padded = bottom_spatial[axis] + 2 * pad_[axis];
      CREMA_LAYER_REQUIRE(extent <= padded, "the kernel (extent "
                                                << extent << " with dilation) is larger than the "
                                                << "padded input on spatial axis " << axis << " ("
                                                << bottom_spatial[axis] << " + 2 * pad "
                                                << pad_[axis] << " = " << padded << ")");
      top_spatial[axis] = (padded - extent) / stride_[axis] + 1;
    }
  }
  input_spatial_shape_ = ReverseDimensions() ? top_spatial : bottom_spatial;
  output_spatial_shape_ = ReverseDimensions() ? bottom_spatial : top_spatial;
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::StoreNdShapes() {
  std::vector<int> shapes{conv_in_channels_};
  shapes.insert(shapes.end(), input_spatial_shape_.begin(), input_spatial_shape_.end());
  shapes.push_back(column_rows_);
  shapes.insert(shapes.end(), output_spatial_shape_.begin(), output_spatial_shape_.end());
  for (const std::vector<int>* values : {&kernel_shape_, &pad_, &stride_, &dilation_}) {
    shapes.insert(shapes.end(), values->begin(), values->end());
  }
  // Invariant: nd_shapes_ was sized for this layer's spatial axes at set-up.
  CHECK_EQ(shapes.size() * sizeof(int), nd_shapes_->size());
  // Reshape runs before every Forward: rewriting unchanged shapes would cost
  // the GPU a copy each time.
  const int* stored = NdShapes_cpu();
  if (std::equal(shapes.begin(), shapes.end(), stored)) return;
  std::copy(shapes.begin(), shapes.end(), static_cast<int*>(nd_shapes_->mutable_cpu_data()));
}

template <typename Dtype>
std::vector<int> BaseConvolutionLayer<Dtype>::TopShape(const Blob<Dtype>& bottom,
                                                       int top_channels) const {
  std::vector<int> shape(bottom.shape().begin(), bottom.shape().begin() + channel_axis_);
  shape.push_back(top_channels);
  const std::vector<int>& spatial =
      ReverseDimensions() ? input_spatial_shape_ : output_spatial_shape_;
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return shape;
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ReshapeBuffers() {
  const size_t bytes_per_image = sizeof(Dtype) *
                                 (static_cast<size_t>(column_rows_) + conv_out_channels_) *
                                 output_spatial_dim_;
  const auto images_fitting = [&](size_t bytes, int at_most) {
    const size_t fitting = bytes / std::max<size_t>(bytes_per_image, 1);
    return static_cast<int>(std::max<size_t>(1, std::min<size_t>(fitting, at_most)));
  };
  chunk_images_ = images_fitting(kMaxChunkBytes, num_);
  // Blobs allocate on first use: a buffer the chunking never needs costs nothing.
  column_buffer_.Reshape({chunk_images_ * column_rows_ * output_spatial_dim_});
  image_columns_.Reshape({column_rows_ * output_spatial_dim_});
  output_matrix_.Reshape({chunk_images_ * conv_out_channels_ * output_spatial_dim_});

  // The budget is read at every Reshape: a solver thread's share may change it.
  cpu_parts_ = std::max(1, std::min(num_, ThreadBudget()));
  cpu_part_bounds_ = BalancedSplit(num_, cpu_parts_);
  const int part_images = (num_ + cpu_parts_ - 1) / cpu_parts_;
  cpu_chunk_images_ = images_fitting(kMaxCpuChunkBytes, part_images);
  while (static_cast<int>(chunk_buffers_.size()) < cpu_parts_) {
    chunk_buffers_.emplace_back(new ChunkBuffers);
  }
  for (size_t part = 0; part < chunk_buffers_.size(); ++part) {
    ChunkBuffers& buffers = *chunk_buffers_[part];
    buffers.columns.Reshape({cpu_chunk_images_ * column_rows_ * output_spatial_dim_});
    buffers.image_columns.Reshape({column_rows_ * output_spatial_dim_});
    buffers.output_matrix.Reshape({cpu_chunk_images_ * conv_out_channels_ * output_spatial_dim_});
    // The first part sums its gradients straight into the learnable blobs.
    if (part == 0 || this->blobs_.empty()) continue;
    buffers.weight_diff.ReshapeLike(*this->blobs_[0]);
    if (bias_term_) buffers.bias_diff.ReshapeLike(*this->blobs_[1]);
  }
  if (!bias_term_) return;
  // Convolution adds the bias to a chunk's matrix, Deconvolution to one top image.
  const int positions = std::max(std::max(chunk_images_, cpu_chunk_images_) * output_spatial_dim_,
                                 input_spatial_dim_);
  if (bias_multiplier_.count() == positions) return;
  bias_multiplier_.Reshape({positions});
  cpu_set(positions, Dtype(1), bias_multiplier_.mutable_cpu_data());
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ForEachChunk_cpu(Dtype* weight_diff, Dtype* bias_diff,
                                                   const ChunkBody& body) {
  const std::vector<int64_t>& bounds = cpu_part_bounds_;
  // One item per part: when the pool is busy, the caller runs every part in
  // turn, with the same buffers and the same sums.
  ThreadPool::Global().ParallelFor(cpu_parts_, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      ChunkBuffers& buffers = *chunk_buffers_[part];
      Dtype* part_weight_diff = weight_diff;
      Dtype* part_bias_diff = bias_diff;
      if (part > 0 && weight_diff) {
        part_weight_diff = buffers.weight_diff.mutable_cpu_data();
        cpu_set(buffers.weight_diff.count(), Dtype(0), part_weight_diff);
      }
      if (part > 0 && bias_diff) {
        part_bias_diff = buffers.bias_diff.mutable_cpu_data();
        cpu_set(buffers.bias_diff.count(), Dtype(0), part_bias_diff);
      }
      const int last = static_cast<int>(bounds[part + 1]);
      for (int first = static_cast<int>(bounds[part]); first < last; first += cpu_chunk_images_) {
        body(buffers, first, std::min(cpu_chunk_images_, last - first), part_weight_diff,
             part_bias_diff);
      }
    }
  });
  for (int part = 1; part < cpu_parts_; ++part) {
    const ChunkBuffers& buffers = *chunk_buffers_[part];
    if (weight_diff) {
      cpu_axpy(buffers.weight_diff.count(), Dtype(1), buffers.weight_diff.cpu_data(), weight_diff);
    }
    if (bias_diff) {
      cpu_axpy(buffers.bias_diff.count(), Dtype(1), buffers.bias_diff.cpu_data(), bias_diff);
    }
  }
}

// ---- One image ----

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ImageToColumns_cpu(const Dtype* image, Dtype* columns,
                                                     int row_stride) const {
  if (use_2d_im2col_) {
    im2col_cpu(image, conv_in_channels_, input_spatial_shape_[0], input_spatial_shape_[1],
               kernel_shape_[0], kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1],
               dilation_[0], dilation_[1], columns, row_stride);
    return;
  }
  // Invariant: only the 2-D path asks for strided columns.
  CHECK_EQ(row_stride, 0) << "strided columns need the 2-D im2col";
  const int* shapes = NdShapes_cpu();
  im2col_nd_cpu(image, num_spatial_axes_, shapes, shapes + NdColOffset(), shapes + NdKernelOffset(),
                shapes + NdPadOffset(), shapes + NdStrideOffset(), shapes + NdDilationOffset(),
                columns);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ColumnsToImage_cpu(const Dtype* columns, Dtype* image,
                                                     int row_stride) const {
  if (use_2d_im2col_) {
    col2im_cpu(columns, conv_in_channels_, input_spatial_shape_[0], input_spatial_shape_[1],
               kernel_shape_[0], kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1],
               dilation_[0], dilation_[1], image, row_stride);
    return;
  }
  // Invariant: only the 2-D path asks for strided columns.
  CHECK_EQ(row_stride, 0) << "strided columns need the 2-D im2col";
  const int* shapes = NdShapes_cpu();
  col2im_nd_cpu(columns, num_spatial_axes_, shapes, shapes + NdColOffset(),
                shapes + NdKernelOffset(), shapes + NdPadOffset(), shapes + NdStrideOffset(),
                shapes + NdDilationOffset(), image);
}

// ---- One chunk ----

template <typename Dtype>
const Dtype* BaseConvolutionLayer<Dtype>::InputAsColumns_cpu(ChunkBuffers& buffers,
                                                             const Dtype* input, int images) {
  if (images == 1 && is_1x1_) return input;
  Dtype* columns = buffers.columns.mutable_cpu_data();
  if (images == 1) {
    ImageToColumns_cpu(input, columns);
    return columns;
  }
  const int positions = images * output_spatial_dim_;
  for (int i = 0; i < images; ++i) {
    const Dtype* image = input + static_cast<size_t>(i) * conv_input_dim_;
    if (use_2d_im2col_ && !is_1x1_) {
      // Straight into the image's place in the chunk's matrix.
      ImageToColumns_cpu(image, columns + i * output_spatial_dim_, positions);
      continue;
    }
    // A 1x1 image is its own columns.
    const Dtype* image_columns = image;
    if (!is_1x1_) {
      ImageToColumns_cpu(image, buffers.image_columns.mutable_cpu_data());
      image_columns = buffers.image_columns.cpu_data();
    }
    CopyBlock_cpu(column_rows_, output_spatial_dim_, image_columns, output_spatial_dim_,
                  columns + i * output_spatial_dim_, positions);
  }
  return columns;
}

template <typename Dtype>
const Dtype* BaseConvolutionLayer<Dtype>::InputAsRows_cpu(ChunkBuffers& buffers, const Dtype* input,
                                                          int images) {
  Dtype* rows = buffers.columns.mutable_cpu_data();
  const size_t image_rows = static_cast<size_t>(output_spatial_dim_) * column_rows_;
  for (int i = 0; i < images; ++i) {
    im2row_cpu(input + static_cast<size_t>(i) * conv_input_dim_, conv_in_channels_,
               input_spatial_shape_[0], input_spatial_shape_[1], kernel_shape_[0], kernel_shape_[1],
               pad_[0], pad_[1], stride_[0], stride_[1], dilation_[0], dilation_[1],
               rows + i * image_rows);
  }
  return rows;
}

template <typename Dtype>
Dtype* BaseConvolutionLayer<Dtype>::ColumnsFor_cpu(ChunkBuffers& buffers, Dtype* input,
                                                   int images) {
  if (images == 1 && is_1x1_) return input;
  return buffers.columns.mutable_cpu_data();
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::StoreColumnsAsInput_cpu(ChunkBuffers& buffers, int images,
                                                          Dtype* input) {
  if (images == 1 && is_1x1_) return;
  const Dtype* columns = buffers.columns.cpu_data();
  if (images == 1) {
    ColumnsToImage_cpu(columns, input);
    return;
  }
  const int positions = images * output_spatial_dim_;
  for (int i = 0; i < images; ++i) {
    Dtype* image = input + static_cast<size_t>(i) * conv_input_dim_;
    if (use_2d_im2col_ && !is_1x1_) {
      ColumnsToImage_cpu(columns + i * output_spatial_dim_, image, positions);
      continue;
    }
    Dtype* image_columns = is_1x1_ ? image : buffers.image_columns.mutable_cpu_data();
    CopyBlock_cpu(column_rows_, output_spatial_dim_, columns + i * output_spatial_dim_, positions,
                  image_columns, output_spatial_dim_);
    if (!is_1x1_) ColumnsToImage_cpu(image_columns, image);
  }
}

template <typename Dtype>
const Dtype* BaseConvolutionLayer<Dtype>::OutputAsMatrix_cpu(ChunkBuffers& buffers,
                                                             const Dtype* output, int images) {
  if (images == 1) return output;
  Dtype* matrix = buffers.output_matrix.mutable_cpu_data();
  const int positions = images * output_spatial_dim_;
  for (int i = 0; i < images; ++i) {
    CopyBlock_cpu(conv_out_channels_, output_spatial_dim_,
                  output + static_cast<size_t>(i) * conv_output_dim_, output_spatial_dim_,
                  matrix + i * output_spatial_dim_, positions);
  }
  return matrix;
}

template <typename Dtype>
Dtype* BaseConvolutionLayer<Dtype>::OutputMatrixFor_cpu(ChunkBuffers& buffers, Dtype* output,
                                                        int images) {
  return images == 1 ? output : buffers.output_matrix.mutable_cpu_data();
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::StoreOutputMatrix_cpu(ChunkBuffers& buffers, int images,
                                                        Dtype* output) {
  if (images == 1) return;
  const Dtype* matrix = buffers.output_matrix.cpu_data();
  const int positions = images * output_spatial_dim_;
  for (int i = 0; i < images; ++i) {
    CopyBlock_cpu(conv_out_channels_, output_spatial_dim_, matrix + i * output_spatial_dim_,
                  positions, output + static_cast<size_t>(i) * conv_output_dim_,
                  output_spatial_dim_);
  }
}

// ---- The GEMMs; group g owns a contiguous block of rows of every operand ----

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::WeightsTimesColumns_cpu(const Dtype* weights,
                                                          const Dtype* columns, int images,
                                                          Dtype* output) const {
  const int positions = images * output_spatial_dim_;
  const int outputs_per_group = conv_out_channels_ / group_;
  for (int g = 0; g < group_; ++g) {
    cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, outputs_per_group, positions, kernel_dim_, Dtype(1),
                    weights + g * outputs_per_group * kernel_dim_,
                    columns + static_cast<size_t>(g) * kernel_dim_ * positions, Dtype(0),
                    output + static_cast<size_t>(g) * outputs_per_group * positions);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::WeightsTransposedTimesOutput_cpu(const Dtype* weights,
                                                                   const Dtype* output, int images,
                                                                   Dtype* columns) const {
  const int positions = images * output_spatial_dim_;
  const int outputs_per_group = conv_out_channels_ / group_;
  for (int g = 0; g < group_; ++g) {
    cpu_gemm<Dtype>(CblasTrans, CblasNoTrans, kernel_dim_, positions, outputs_per_group, Dtype(1),
                    weights + g * outputs_per_group * kernel_dim_,
                    output + static_cast<size_t>(g) * outputs_per_group * positions, Dtype(0),
                    columns + static_cast<size_t>(g) * kernel_dim_ * positions);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AccumulateWeightDiff_cpu(const Dtype* columns,
                                                           const Dtype* output_diff, int images,
                                                           Dtype* weight_diff) const {
  const int positions = images * output_spatial_dim_;
  const int outputs_per_group = conv_out_channels_ / group_;
  for (int g = 0; g < group_; ++g) {
    cpu_gemm<Dtype>(CblasNoTrans, CblasTrans, outputs_per_group, kernel_dim_, positions, Dtype(1),
                    output_diff + static_cast<size_t>(g) * outputs_per_group * positions,
                    columns + static_cast<size_t>(g) * kernel_dim_ * positions, Dtype(1),
                    weight_diff + g * outputs_per_group * kernel_dim_);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AccumulateWeightDiffFromRows_cpu(const Dtype* rows,
                                                                   const Dtype* output_diff,
                                                                   int images,
                                                                   Dtype* weight_diff) const {
  cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, conv_out_channels_, kernel_dim_,
                  images * output_spatial_dim_, Dtype(1), output_diff, rows, Dtype(1), weight_diff);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AddBias_cpu(const Dtype* bias, int positions,
                                              Dtype* values) const {
  cpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, num_output_, positions, 1, Dtype(1), bias,
                  bias_multiplier_.cpu_data(), Dtype(1), values);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AccumulateBiasDiff_cpu(const Dtype* diff, int positions,
                                                         Dtype* bias_diff) const {
  cpu_gemv<Dtype>(CblasNoTrans, num_output_, positions, Dtype(1), diff, bias_multiplier_.cpu_data(),
                  Dtype(1), bias_diff);
}

INSTANTIATE_CLASS(BaseConvolutionLayer);

}  // namespace crema
