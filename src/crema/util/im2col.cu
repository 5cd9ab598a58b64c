#include "crema/common.hpp"
#include "crema/util/im2col.hpp"

namespace crema {
namespace {

// The N-D kernels keep their shape arrays in fixed-size shared memory.
constexpr int kMaxSpatialAxesGpu = 10;

__device__ inline bool InsideAxis(int pos, int size) {
  return static_cast<unsigned>(pos) < static_cast<unsigned>(size);
}

inline int OutputSize(int size, int kernel, int pad, int stride, int dilation) {
  return (size + 2 * pad - (dilation * (kernel - 1) + 1)) / stride + 1;
}

// One thread per (channel, output position): it writes that position's entry
// in every column row of its channel.
template <typename Dtype>
__global__ void Im2colKernel(int64_t num_kernels, const Dtype* data_im, int height, int width,
                             int kernel_h, int kernel_w, int pad_h, int pad_w, int stride_h,
                             int stride_w, int dilation_h, int dilation_w, int output_h,
                             int output_w, Dtype* data_col) {
  CUDA_KERNEL_LOOP(index, num_kernels) {
    const int ow = index % output_w;
    const int oh = (index / output_w) % output_h;
    const int channel = index / (output_w * output_h);
    const int output_count = output_h * output_w;
    const Dtype* channel_im = data_im + static_cast<int64_t>(channel) * height * width;
    Dtype* col = data_col + static_cast<int64_t>(channel) * kernel_h * kernel_w * output_count +
                 oh * output_w + ow;
    for (int kh = 0; kh < kernel_h; ++kh) {
      const int ih = oh * stride_h - pad_h + kh * dilation_h;
      for (int kw = 0; kw < kernel_w; ++kw) {
        const int iw = ow * stride_w - pad_w + kw * dilation_w;
        *col = InsideAxis(ih, height) && InsideAxis(iw, width) ? channel_im[ih * width + iw]
                                                               : Dtype(0);
        col += output_count;
      }
    }
  }
}

// Offset along one axis of the output position whose kernel tap `kernel_pos`
// reads input position `pos`, or -1 when no output position does.
__device__ inline int OutputPositionFor(int pos, int kernel_pos, int pad, int stride, int dilation,
                                        int output_size) {
  const int shifted = pos + pad - kernel_pos * dilation;
  if (shifted < 0 || shifted % stride != 0) return -1;
  const int out = shifted / stride;
  return out < output_size ? out : -1;
}

// One thread per image element: it gathers every column entry that reads the
// element, in a fixed order, so the sum is deterministic and needs no atomics.
template <typename Dtype>
__global__ void Col2imKernel(int64_t num_kernels, const Dtype* data_col, int height, int width,
                             int kernel_h, int kernel_w, int pad_h, int pad_w, int stride_h,
                             int stride_w, int dilation_h, int dilation_w, int output_h,
                             int output_w, Dtype* data_im) {
  CUDA_KERNEL_LOOP(index, num_kernels) {
    const int w = index % width;
    const int h = (index / width) % height;
    const int channel = index / (width * height);
    const int output_count = output_h * output_w;
    const Dtype* channel_col =
        data_col + static_cast<int64_t>(channel) * kernel_h * kernel_w * output_count;
    Dtype sum = 0;
    for (int kh = 0; kh < kernel_h; ++kh) {
      const int oh = OutputPositionFor(h, kh, pad_h, stride_h, dilation_h, output_h);
      if (oh < 0) continue;
      for (int kw = 0; kw < kernel_w; ++kw) {
        const int ow = OutputPositionFor(w, kw, pad_w, stride_w, dilation_w, output_w);
        if (ow < 0) continue;
        sum += channel_col[static_cast<int64_t>(kh * kernel_w + kw) * output_count + oh * output_w +
                           ow];
      }
    }
    data_im[index] = sum;
  }
}

// The N-D shape arrays, copied from device memory into shared memory once per
// block.
struct SharedNdShape {
  int im[kMaxSpatialAxesGpu + 1];
  int col[kMaxSpatialAxesGpu + 1];
  int kernel[kMaxSpatialAxesGpu];
  int pad[kMaxSpatialAxesGpu];
  int stride[kMaxSpatialAxesGpu];
  int dilation[kMaxSpatialAxesGpu];
};

__device__ void LoadNdShape(int num_axes, const int* im_shape, const int* col_shape,
                            const int* kernel_shape, const int* pad, const int* stride,
                            const int* dilation, SharedNdShape* shape) {
  const int i = threadIdx.x;
  if (i <= num_axes) {
    shape->im[i] = im_shape[i];
    shape->col[i] = col_shape[i];
  }
  if (i < num_axes) {
    shape->kernel[i] = kernel_shape[i];
    shape->pad[i] = pad[i];
    shape->stride[i] = stride[i];
    shape->dilation[i] = dilation[i];
  }
  __syncthreads();
}

__device__ inline int Product(const int* values, int count) {
  int product = 1;
  for (int i = 0; i < count; ++i) product *= values[i];
  return product;
}

// Splits a row-major flat index into a channel and a spatial multi-index.
__device__ inline int SplitIndex(int64_t index, int num_axes, const int* spatial, int* position) {
  for (int axis = num_axes - 1; axis >= 0; --axis) {
    position[axis] = index % spatial[axis];
    index /= spatial[axis];
  }
  return static_cast<int>(index);
}

// Advances a row-major multi-index within `shape`; false once it wraps around.
__device__ inline bool NextMultiIndex(int num_axes, const int* shape, int* index) {
  for (int axis = num_axes - 1; axis >= 0; --axis) {
    if (++index[axis] < shape[axis]) return true;
    index[axis] = 0;
  }
  return false;
}

template <typename Dtype>
__global__ void Im2colNdKernel(int64_t num_kernels, int num_axes, const Dtype* data_im,
                               const int* im_shape, const int* col_shape, const int* kernel_shape,
                               const int* pad, const int* stride, const int* dilation,
                               Dtype* data_col) {
  __shared__ SharedNdShape shape;
  LoadNdShape(num_axes, im_shape, col_shape, kernel_shape, pad, stride, dilation, &shape);
  const int* image_spatial = shape.im + 1;
  const int* output_spatial = shape.col + 1;
  const int output_count = Product(output_spatial, num_axes);
  const int image_count = Product(image_spatial, num_axes);
  const int kernel_count = Product(shape.kernel, num_axes);
  int output_pos[kMaxSpatialAxesGpu];
  int kernel_pos[kMaxSpatialAxesGpu];
  CUDA_KERNEL_LOOP(index, num_kernels) {
    const int channel = SplitIndex(index, num_axes, output_spatial, output_pos);
    const Dtype* channel_im = data_im + static_cast<int64_t>(channel) * image_count;
    Dtype* col = data_col + static_cast<int64_t>(channel) * kernel_count * output_count +
                 index % output_count;
    for (int axis = 0; axis < num_axes; ++axis) kernel_pos[axis] = 0;
    do {
      int im_offset = 0;
      bool inside = true;
      for (int axis = 0; axis < num_axes; ++axis) {
        const int pos = output_pos[axis] * shape.stride[axis] - shape.pad[axis] +
                        kernel_pos[axis] * shape.dilation[axis];
        inside = inside && InsideAxis(pos, image_spatial[axis]);
        im_offset = im_offset * image_spatial[axis] + pos;
      }
      *col = inside ? channel_im[im_offset] : Dtype(0);
      col += output_count;
    } while (NextMultiIndex(num_axes, shape.kernel, kernel_pos));
  }
}

template <typename Dtype>
__global__ void Col2imNdKernel(int64_t num_kernels, int num_axes, const Dtype* data_col,
                               const int* im_shape, const int* col_shape, const int* kernel_shape,
                               const int* pad, const int* stride, const int* dilation,
                               Dtype* data_im) {
  __shared__ SharedNdShape shape;
  LoadNdShape(num_axes, im_shape, col_shape, kernel_shape, pad, stride, dilation, &shape);
  const int* image_spatial = shape.im + 1;
  const int* output_spatial = shape.col + 1;
  const int output_count = Product(output_spatial, num_axes);
  const int kernel_count = Product(shape.kernel, num_axes);
  int image_pos[kMaxSpatialAxesGpu];
  int kernel_pos[kMaxSpatialAxesGpu];
  CUDA_KERNEL_LOOP(index, num_kernels) {
    const int channel = SplitIndex(index, num_axes, image_spatial, image_pos);
    const Dtype* channel_col =
        data_col + static_cast<int64_t>(channel) * kernel_count * output_count;
    for (int axis = 0; axis < num_axes; ++axis) kernel_pos[axis] = 0;
    Dtype sum = 0;
    int kernel_offset = 0;
    do {
      int out_offset = 0;
      bool reads_element = true;
      for (int axis = 0; axis < num_axes && reads_element; ++axis) {
        const int out =
            OutputPositionFor(image_pos[axis], kernel_pos[axis], shape.pad[axis],
                              shape.stride[axis], shape.dilation[axis], output_spatial[axis]);
        reads_element = out >= 0;
        out_offset = out_offset * output_spatial[axis] + out;
      }
      if (reads_element) {
        sum += channel_col[static_cast<int64_t>(kernel_offset) * output_count + out_offset];
      }
      ++kernel_offset;
    } while (NextMultiIndex(num_axes, shape.kernel, kernel_pos));
    data_im[index] = sum;
  }
}

void CheckSpatialAxes(int num_spatial_axes) {
  CHECK_GE(num_spatial_axes, 0);
  CHECK_LE(num_spatial_axes, kMaxSpatialAxesGpu)
      << "the GPU N-D im2col/col2im supports at most " << kMaxSpatialAxesGpu
      << " spatial axes (its shape arrays live in fixed-size shared memory)";
}

}  // namespace

template <typename Dtype>
void im2col_gpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_col) {
  const int output_h = OutputSize(height, kernel_h, pad_h, stride_h, dilation_h);
  const int output_w = OutputSize(width, kernel_w, pad_w, stride_w, dilation_w);
  const int64_t num_kernels = static_cast<int64_t>(channels) * output_h * output_w;
  Im2colKernel<Dtype><<<CREMA_GET_BLOCKS(num_kernels), CREMA_CUDA_NUM_THREADS>>>(
      num_kernels, data_im, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w,
      dilation_h, dilation_w, output_h, output_w, data_col);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void col2im_gpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im) {
  const int output_h = OutputSize(height, kernel_h, pad_h, stride_h, dilation_h);
  const int output_w = OutputSize(width, kernel_w, pad_w, stride_w, dilation_w);
  const int64_t num_kernels = static_cast<int64_t>(channels) * height * width;
  Col2imKernel<Dtype><<<CREMA_GET_BLOCKS(num_kernels), CREMA_CUDA_NUM_THREADS>>>(
      num_kernels, data_col, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w,
      dilation_h, dilation_w, output_h, output_w, data_im);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void im2col_nd_gpu(const Dtype* data_im, int num_spatial_axes, int num_kernels, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col) {
  CheckSpatialAxes(num_spatial_axes);
  Im2colNdKernel<Dtype><<<CREMA_GET_BLOCKS(num_kernels), CREMA_CUDA_NUM_THREADS>>>(
      num_kernels, num_spatial_axes, data_im, im_shape, col_shape, kernel_shape, pad, stride,
      dilation, data_col);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void col2im_nd_gpu(const Dtype* data_col, int num_spatial_axes, int im_size, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im) {
  CheckSpatialAxes(num_spatial_axes);
  Col2imNdKernel<Dtype><<<CREMA_GET_BLOCKS(im_size), CREMA_CUDA_NUM_THREADS>>>(
      im_size, num_spatial_axes, data_col, im_shape, col_shape, kernel_shape, pad, stride, dilation,
      data_im);
  CUDA_POST_KERNEL_CHECK;
}

#define INSTANTIATE_IM2COL_GPU(Dtype)                                                             \
  template void im2col_gpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*);                                                   \
  template void col2im_gpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*);                                                   \
  template void im2col_nd_gpu<Dtype>(const Dtype*, int, int, const int*, const int*, const int*,  \
                                     const int*, const int*, const int*, Dtype*);                 \
  template void col2im_nd_gpu<Dtype>(const Dtype*, int, int, const int*, const int*, const int*,  \
                                     const int*, const int*, const int*, Dtype*)

INSTANTIATE_IM2COL_GPU(float);
INSTANTIATE_IM2COL_GPU(double);

}  // namespace crema
