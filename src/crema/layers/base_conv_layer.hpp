// BaseConvolutionLayer: what Convolution, Deconvolution and Im2col share. It
// reads and validates the ConvolutionParameter (kernel, stride, pad, dilation
// per spatial axis; num_output, group, bias), creates or checks the learnable
// blobs, and owns the column buffers and the GEMM steps of a convolution.
//
// The words "input" and "output" below are the convolution's: a Convolution
// maps bottom (input) to top (output); a Deconvolution runs the same
// convolution backwards, so its top is the convolution's input and its bottom
// the convolution's output.
//
// To make one GEMM per group serve many images, images are processed in chunks,
// each laid out as a matrix: the columns of a chunk are
// [input channels * kernel size] x [images * output positions], and outputs are
// [output channels] x [images * output positions] (a blob holds them as
// [images][output channels][output positions], so they are rearranged). A
// chunk of one image needs no rearrangement, and the helpers then work on the
// blob's memory directly.
//
// On the CPU the batch is also split into parts, one per thread of the thread
// budget, run in parallel on the thread pool (each GEMM then runs on one
// thread): small images make small GEMMs, which one core runs well but two
// cores share badly. Each part has its own buffers and its own parameter
// gradient sums, added together in part order afterwards, so a result never
// depends on which thread ran what. A part's chunks are sized to stay in a
// core's L2 cache. On the GPU the chunks cover the whole batch.
#ifndef CREMA_LAYERS_BASE_CONV_LAYER_HPP_
#define CREMA_LAYERS_BASE_CONV_LAYER_HPP_

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "crema/layer.hpp"
#include "crema/syncedmem.hpp"
#include "crema/util/im2col.hpp"

namespace crema {

template <typename Dtype>
class BaseConvolutionLayer : public Layer<Dtype> {
 public:
  explicit BaseConvolutionLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  // Several bottoms of one shape may share the filters, each with its own top.
  int MinBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  bool EqualNumBottomTopBlobs() const override { return true; }

 protected:
  // True when the top is the convolution's input (Deconvolution).
  virtual bool ReverseDimensions() const = 0;

  // Set-up steps, also used on their own by Im2col (which has no filters).
  // Reads the axis, kernel, stride, pad and dilation.
  void ReadGeometry(const Blob<Dtype>& bottom);
  // Reads num_output, group and bias_term; creates the learnable blobs, or
  // checks the shapes of those a trained model brought.
  void SetUpFilters();
  // Checks the bottoms and computes both sides' spatial shapes.
  void ReshapeGeometry(const std::vector<Blob<Dtype>*>& bottom);
  // The top's shape: the bottom's leading axes, then top_channels, then the
  // top's spatial shape.
  std::vector<int> TopShape(const Blob<Dtype>& bottom, int top_channels) const;

  // Number of images in a GPU chunk that starts at first_image.
  int ChunkImages(int first_image) const { return std::min(chunk_images_, num_ - first_image); }

  // ---- One image (its im2col / col2im) ----
  // With the 2-D im2col the columns' rows may lie row_stride apart (0:
  // packed), so that an image's columns go straight into a chunk's matrix.
  void ImageToColumns_cpu(const Dtype* image, Dtype* columns, int row_stride = 0) const;
  // Overwrites image with the sum of the columns' entries that read it.
  void ColumnsToImage_cpu(const Dtype* columns, Dtype* image, int row_stride = 0) const;

  // ---- The batch on the CPU, in parallel parts ----
  // What one part of the batch works in.
  struct ChunkBuffers {
    Blob<Dtype> columns;        // a chunk's columns
    Blob<Dtype> image_columns;  // one image's columns, before they join a chunk
    Blob<Dtype> output_matrix;  // a chunk's output in matrix form
    // The part's own parameter gradient sums (parts after the first).
    Blob<Dtype> weight_diff, bias_diff;
  };
  // Works on `images` images from first_image, accumulating parameter
  // gradients (when asked for) into the two pointers it is given.
  using ChunkBody = std::function<void(ChunkBuffers& buffers, int first_image, int images,
                                       Dtype* weight_diff, Dtype* bias_diff)>;
  // Calls body on every chunk of the batch, the parts in parallel; then adds
  // the parts' gradient sums to weight_diff and bias_diff (either may be null:
  // not asked for) in part order.
  void ForEachChunk_cpu(Dtype* weight_diff, Dtype* bias_diff, const ChunkBody& body);

  // ---- One chunk, CPU ----
  // The columns of `images` consecutive input images, in the part's column
  // buffer (or the input itself when there is nothing to lay out).
  const Dtype* InputAsColumns_cpu(ChunkBuffers& buffers, const Dtype* input, int images);
  // The columns' transpose (one row per output position, images one after
  // the other), in the part's column buffer: what the weight gradient of a
  // first layer reads (WeightGradientFromRows).
  const Dtype* InputAsRows_cpu(ChunkBuffers& buffers, const Dtype* input, int images);
  // Where to write the columns that StoreColumnsAsInput_cpu then turns into
  // `images` input images.
  Dtype* ColumnsFor_cpu(ChunkBuffers& buffers, Dtype* input, int images);
  void StoreColumnsAsInput_cpu(ChunkBuffers& buffers, int images, Dtype* input);
  // The matrix form of `images` consecutive output images.
  const Dtype* OutputAsMatrix_cpu(ChunkBuffers& buffers, const Dtype* output, int images);
  // Where to write the matrix that StoreOutputMatrix_cpu then copies into
  // `images` output images.
  Dtype* OutputMatrixFor_cpu(ChunkBuffers& buffers, Dtype* output, int images);
  void StoreOutputMatrix_cpu(ChunkBuffers& buffers, int images, Dtype* output);

  // output = weights * columns, group by group.
  void WeightsTimesColumns_cpu(const Dtype* weights, const Dtype* columns, int images,
                               Dtype* output) const;
  // columns = weights^T * output, group by group.
  void WeightsTransposedTimesOutput_cpu(const Dtype* weights, const Dtype* output, int images,
                                        Dtype* columns) const;
  // weight_diff += output_diff * columns^T, group by group.
  // Whether the weight gradient reads the columns' transpose: a first layer
  // (fewer than 16 input channels, one group, 2-D, not pointwise) where
  // im2row is vectorised. Its product, few output rows by few columns over a
  // long sum, runs faster on oneDNN's GEMM with the columns' transpose as a
  // plain operand (docs/bench-report.md).
  bool WeightGradientFromRows() const {
    return use_2d_im2col_ && !is_1x1_ && group_ == 1 && conv_in_channels_ < 16 &&
           im2row_vectorised<Dtype>(kernel_shape_[1], dilation_[1]);
  }
  // weight_diff += output_diff * rows (InputAsRows_cpu), one group.
  void AccumulateWeightDiffFromRows_cpu(const Dtype* rows, const Dtype* output_diff, int images,
                                        Dtype* weight_diff) const;
  void AccumulateWeightDiff_cpu(const Dtype* columns, const Dtype* output_diff, int images,
                                Dtype* weight_diff) const;
  // values (num_output x positions) += bias, one rank-1 GEMM.
  void AddBias_cpu(const Dtype* bias, int positions, Dtype* values) const;
  // bias_diff += the sum over positions of diff (num_output x positions).
  void AccumulateBiasDiff_cpu(const Dtype* diff, int positions, Dtype* bias_diff) const;

#ifdef CREMA_CUDA
  // The GPU forms of the same.
  void ImageToColumns_gpu(const Dtype* image, Dtype* columns) const;
  void ColumnsToImage_gpu(const Dtype* columns, Dtype* image) const;
  const Dtype* InputAsColumns_gpu(const Dtype* input, int images);
  Dtype* ColumnsFor_gpu(Dtype* input, int images);
  void StoreColumnsAsInput_gpu(int images, Dtype* input);
  const Dtype* OutputAsMatrix_gpu(const Dtype* output, int images);
  Dtype* OutputMatrixFor_gpu(Dtype* output, int images);
  void StoreOutputMatrix_gpu(int images, Dtype* output);
  void WeightsTimesColumns_gpu(const Dtype* weights, const Dtype* columns, int images,
                               Dtype* output);
  void WeightsTransposedTimesOutput_gpu(const Dtype* weights, const Dtype* output, int images,
                                        Dtype* columns);
  void AccumulateWeightDiff_gpu(const Dtype* columns, const Dtype* output_diff, int images,
                                Dtype* weight_diff);
  void AddBias_gpu(const Dtype* bias, int positions, Dtype* values);
  void AccumulateBiasDiff_gpu(const Dtype* diff, int positions, Dtype* bias_diff);
#endif

  // ---- Geometry (ReadGeometry, ReshapeGeometry) ----
  int channel_axis_ = 1;
  int num_spatial_axes_ = 0;
  std::vector<int> kernel_shape_, stride_, pad_, dilation_;
  int kernel_size_ = 1;  // product of kernel_shape_
  // A 1x1 kernel with stride 1 and no padding: the input is its own columns.
  bool is_1x1_ = false;
  bool use_2d_im2col_ = false;
  // Channels of the bottom; images = product of the axes before the channels.
  int channels_ = 0;
  int num_ = 0;
  std::vector<int> input_spatial_shape_, output_spatial_shape_;
  int input_spatial_dim_ = 0;
  int output_spatial_dim_ = 0;

  // ---- Filters (SetUpFilters) ----
  int num_output_ = 0;
  int group_ = 1;
  bool bias_term_ = true;
  // The convolution's channels: for Convolution (and Im2col) the input is the
  // bottom; for Deconvolution, the top.
  int conv_in_channels_ = 0;
  int conv_out_channels_ = 0;

  // ---- Sizes derived in Reshape ----
  int column_rows_ = 0;                   // conv_in_channels_ * kernel_size_, all groups
  int kernel_dim_ = 0;                    // rows of one group's columns
  int conv_input_dim_ = 0;                // one input image: conv_in_channels_ x input positions
  int conv_output_dim_ = 0;               // one output image: conv_out_channels_ x output positions
  int chunk_images_ = 1;                  // images in a GPU chunk
  int cpu_parts_ = 1;                     // parts of the batch run in parallel on the CPU
  int cpu_chunk_images_ = 1;              // images in a chunk of a CPU part
  std::vector<int64_t> cpu_part_bounds_;  // cpu_parts_ + 1 image boundaries

 private:
  // One value per spatial axis of kernel_size, stride, pad or dilation: from
  // the field's _h/_w pair (2-D only), or from the repeated field (one value
  // for every axis, or one per axis; none means default_value, and is an
  // error when default_value is negative).
  std::vector<int> ReadPerAxis(const char* field, const char* pair_prefix,
                               const google::protobuf::RepeatedField<uint32_t>& values, bool has_h,
                               bool has_w, uint32_t value_h, uint32_t value_w,
                               int default_value) const;
  void RequirePositive(const char* field, const std::vector<int>& values) const;
  void CheckLearnableBlobs(const std::vector<int>& weight_shape) const;
  void ComputeSpatialShapes(const Blob<Dtype>& bottom);
  void ReshapeBuffers();
  // The N-D im2col's shape arrays, one after the other: im and col
  // (num_spatial_axes_ + 1 each), kernel, pad, stride, dilation.
  void StoreNdShapes();
  const int* NdShapes_cpu() const { return static_cast<const int*>(nd_shapes_->cpu_data()); }
#ifdef CREMA_CUDA
  const int* NdShapes_gpu() const { return static_cast<const int*>(nd_shapes_->gpu_data()); }
#endif
  // Offsets of each array within the N-D shape arrays.
  int NdColOffset() const { return num_spatial_axes_ + 1; }
  int NdKernelOffset() const { return 2 * (num_spatial_axes_ + 1); }
  int NdPadOffset() const { return NdKernelOffset() + num_spatial_axes_; }
  int NdStrideOffset() const { return NdPadOffset() + num_spatial_axes_; }
  int NdDilationOffset() const { return NdStrideOffset() + num_spatial_axes_; }

  // The GPU's chunk buffers (see ChunkBuffers).
  Blob<Dtype> column_buffer_;
  Blob<Dtype> image_columns_;
  Blob<Dtype> output_matrix_;
  // One per CPU part (grown, never shrunk, so a smaller batch costs nothing).
  std::vector<std::unique_ptr<ChunkBuffers>> chunk_buffers_;
  Blob<Dtype> bias_multiplier_;              // ones
  std::shared_ptr<SyncedMemory> nd_shapes_;  // host and device copies
};

}  // namespace crema

#endif  // CREMA_LAYERS_BASE_CONV_LAYER_HPP_
