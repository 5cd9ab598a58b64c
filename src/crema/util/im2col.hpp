// im2col lays out every receptive field of an image as a column, so a
// convolution becomes one matrix product; col2im scatters columns back,
// summing where fields overlap (the gradient of im2col).
#ifndef CREMA_UTIL_IM2COL_HPP_
#define CREMA_UTIL_IM2COL_HPP_

namespace crema {

// 2-D: data_im is channels x height x width; data_col is
// (channels * kernel_h * kernel_w) x (output_h * output_w), with
// output_h = (height + 2 * pad_h - (dilation_h * (kernel_h - 1) + 1)) / stride_h + 1.
// Positions in the padding read as zero. On the CPU the rows of data_col may
// lie col_row_stride apart (0: packed, output_h * output_w), so that one
// image's columns can be written straight into a matrix of several images'.
template <typename Dtype>
void im2col_cpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_col, int col_row_stride = 0);

// Accumulates into a zeroed image (the function zeroes data_im first).
template <typename Dtype>
void col2im_cpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im, int col_row_stride = 0);

// im2col transposed: data_rows is (output_h * output_w) x (channels *
// kernel_h * kernel_w), row p holding column p of im2col's data_col (the
// values output position p reads), for products that want the columns'
// transpose.
template <typename Dtype>
void im2row_cpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_rows);
// Whether im2row_cpu runs its vector body for such a call: float data,
// dilation_w 1 and kernel_w <= 16 on a CPU with AVX-512. Elsewhere it runs
// plain loops, value by value, slower than im2col's.
template <typename Dtype>
bool im2row_vectorised(int kernel_w, int dilation_w);

// N-D: num_spatial_axes spatial axes; im_shape is (channels, spatial...) and
// col_shape is (channels * prod(kernel), output spatial...), each of
// num_spatial_axes + 1 entries; kernel_shape, pad, stride, dilation have
// num_spatial_axes entries each.
template <typename Dtype>
void im2col_nd_cpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col);

template <typename Dtype>
void col2im_nd_cpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im);

#ifdef CREMA_CUDA
// GPU forms of the same, same layouts. In the N-D forms im_shape, col_shape,
// kernel_shape, pad, stride and dilation point to device memory (for example
// Blob<int>::gpu_data()); num_kernels is channels * prod(output spatial) for
// im2col and channels * prod(input spatial) for col2im.
template <typename Dtype>
void im2col_gpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_col);

template <typename Dtype>
void col2im_gpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im);

template <typename Dtype>
void im2col_nd_gpu(const Dtype* data_im, int num_spatial_axes, int num_kernels, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col);

template <typename Dtype>
void col2im_nd_gpu(const Dtype* data_col, int num_spatial_axes, int im_size, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im);
#endif

}  // namespace crema

#endif  // CREMA_UTIL_IM2COL_HPP_
