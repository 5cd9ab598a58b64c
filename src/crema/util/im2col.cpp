#include "crema/util/im2col.hpp"

#include <algorithm>
#include <vector>

#include "crema/common.hpp"

namespace crema {
namespace {

// Position along one axis of the input read by kernel tap `kernel_pos` at
// output position `out_pos`; may fall in the padding (< 0 or >= size).
inline int InputPosition(int out_pos, int kernel_pos, int pad, int stride, int dilation) {
  return out_pos * stride - pad + kernel_pos * dilation;
}

inline bool InsideAxis(int pos, int size) {
  // One unsigned comparison covers both pos < 0 and pos >= size.
  return static_cast<unsigned>(pos) < static_cast<unsigned>(size);
}

inline int OutputSize(int size, int kernel, int pad, int stride, int dilation) {
  return (size + 2 * pad - (dilation * (kernel - 1) + 1)) / stride + 1;
}

// Both im2col and col2im walk the same column rows, one per (channel, kernel
// tap, output row), each output_w entries long (rows of one tap are
// col_row_stride apart); only what they do with a row differs.
// visit(col_offset, im_offset, ow_begin, ow_end): entries [ow_begin, ow_end)
// of the row at col_offset read the image at
// im_offset + ow * stride_w; the others read padding. Working a row at a time
// keeps the bounds checks out of the inner loops.
template <typename RowVisit>
void VisitColumnRows2d(int channels, int height, int width, int kernel_h, int kernel_w, int pad_h,
                       int pad_w, int stride_h, int stride_w, int dilation_h, int dilation_w,
                       int col_row_stride, RowVisit visit) {
  const int output_h = OutputSize(height, kernel_h, pad_h, stride_h, dilation_h);
  const int output_w = OutputSize(width, kernel_w, pad_w, stride_w, dilation_w);
  if (col_row_stride == 0) col_row_stride = output_h * output_w;
  int tap_offset = 0;
  for (int channel = 0; channel < channels; ++channel) {
    const int channel_offset = channel * height * width;
    for (int kh = 0; kh < kernel_h; ++kh) {
      for (int kw = 0; kw < kernel_w; ++kw) {
        // The input column read at ow = 0, and the output range inside the image.
        const int iw0 = InputPosition(0, kw, pad_w, stride_w, dilation_w);
        const int inside_begin = iw0 >= 0 ? 0 : (-iw0 + stride_w - 1) / stride_w;
        const int inside_end =
            width > iw0 ? std::min(output_w, (width - iw0 + stride_w - 1) / stride_w) : 0;
        const int ow_begin = std::min(inside_begin, inside_end);
        int col_offset = tap_offset;
        tap_offset += col_row_stride;
        for (int oh = 0; oh < output_h; ++oh, col_offset += output_w) {
          const int ih = InputPosition(oh, kh, pad_h, stride_h, dilation_h);
          if (InsideAxis(ih, height)) {
            visit(col_offset, channel_offset + ih * width + iw0, ow_begin, inside_end);
          } else {
            visit(col_offset, 0, 0, 0);
          }
        }
      }
    }
  }
}

int Product(const int* values, int count) {
  int product = 1;
  for (int i = 0; i < count; ++i) product *= values[i];
  return product;
}

// Advances a row-major multi-index within `shape`; the last axis moves fastest.
void NextMultiIndex(int num_axes, const int* shape, int* index) {
  for (int axis = num_axes - 1; axis >= 0; --axis) {
    if (++index[axis] < shape[axis]) return;
    index[axis] = 0;
  }
}

// The N-D form of VisitColumnPairs2d: each column row is one (channel, kernel
// tap) pair, and its entries walk every output position.
template <typename Visit>
void VisitColumnPairsNd(int num_spatial_axes, const int* im_shape, const int* col_shape,
                        const int* kernel_shape, const int* pad, const int* stride,
                        const int* dilation, Visit visit) {
  const int* image_spatial = im_shape + 1;
  const int* output_spatial = col_shape + 1;
  const int kernel_count = Product(kernel_shape, num_spatial_axes);
  const int output_count = Product(output_spatial, num_spatial_axes);
  // Invariant: the convolution layer sizes the columns from the same shapes.
  CHECK_EQ(col_shape[0], im_shape[0] * kernel_count)
      << "col_shape[0] must be channels * kernel size";
  std::vector<int> kernel_pos(num_spatial_axes);
  std::vector<int> output_pos(num_spatial_axes);
  int col_index = 0;
  for (int col_row = 0; col_row < col_shape[0]; ++col_row) {
    int rest = col_row;
    for (int axis = num_spatial_axes - 1; axis >= 0; --axis) {
      kernel_pos[axis] = rest % kernel_shape[axis];
      rest /= kernel_shape[axis];
    }
    const int channel = rest;
    std::fill(output_pos.begin(), output_pos.end(), 0);
    for (int out = 0; out < output_count; ++out, ++col_index) {
      int im_index = channel;
      bool inside = true;
      for (int axis = 0; axis < num_spatial_axes; ++axis) {
        const int pos = InputPosition(output_pos[axis], kernel_pos[axis], pad[axis], stride[axis],
                                      dilation[axis]);
        inside = inside && InsideAxis(pos, image_spatial[axis]);
        im_index = im_index * image_spatial[axis] + pos;
      }
      visit(col_index, inside ? im_index : -1);
      NextMultiIndex(num_spatial_axes, output_spatial, output_pos.data());
    }
  }
}

}  // namespace

template <typename Dtype>
void im2col_cpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_col, int col_row_stride) {
  const int output_w = OutputSize(width, kernel_w, pad_w, stride_w, dilation_w);
  VisitColumnRows2d(channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w,
                    dilation_h, dilation_w, col_row_stride,
                    [&](int col_offset, int im_offset, int ow_begin, int ow_end) {
                      // Plain loops: rows are a few values long (see CMakeLists.txt).
                      Dtype* col = data_col + col_offset;
                      for (int ow = 0; ow < ow_begin; ++ow) col[ow] = Dtype(0);
                      const Dtype* im = data_im + im_offset;
                      if (stride_w == 1) {
                        for (int ow = ow_begin; ow < ow_end; ++ow) col[ow] = im[ow];
                      } else {
                        for (int ow = ow_begin; ow < ow_end; ++ow) col[ow] = im[ow * stride_w];
                      }
                      for (int ow = std::max(ow_begin, ow_end); ow < output_w; ++ow) {
                        col[ow] = Dtype(0);
                      }
                    });
}

template <typename Dtype>
void col2im_cpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im, int col_row_stride) {
  std::fill(data_im, data_im + channels * height * width, Dtype(0));
  VisitColumnRows2d(channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w,
                    dilation_h, dilation_w, col_row_stride,
                    [&](int col_offset, int im_offset, int ow_begin, int ow_end) {
                      const Dtype* col = data_col + col_offset;
                      Dtype* im = data_im + im_offset;
                      if (stride_w == 1) {
                        for (int ow = ow_begin; ow < ow_end; ++ow) im[ow] += col[ow];
                      } else {
                        for (int ow = ow_begin; ow < ow_end; ++ow) im[ow * stride_w] += col[ow];
                      }
                    });
}

template <typename Dtype>
void im2col_nd_cpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col) {
  VisitColumnPairsNd(num_spatial_axes, im_shape, col_shape, kernel_shape, pad, stride, dilation,
                     [&](int col_index, int im_index) {
                       data_col[col_index] = im_index >= 0 ? data_im[im_index] : Dtype(0);
                     });
}

template <typename Dtype>
void col2im_nd_cpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im) {
  const int im_count = Product(im_shape, num_spatial_axes + 1);
  std::fill(data_im, data_im + im_count, Dtype(0));
  VisitColumnPairsNd(num_spatial_axes, im_shape, col_shape, kernel_shape, pad, stride, dilation,
                     [&](int col_index, int im_index) {
                       if (im_index >= 0) data_im[im_index] += data_col[col_index];
                     });
}

#define INSTANTIATE_IM2COL_CPU(Dtype)                                                             \
  template void im2col_cpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*, int);                                              \
  template void col2im_cpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*, int);                                              \
  template void im2col_nd_cpu<Dtype>(const Dtype*, int, const int*, const int*, const int*,       \
                                     const int*, const int*, const int*, Dtype*);                 \
  template void col2im_nd_cpu<Dtype>(const Dtype*, int, const int*, const int*, const int*,       \
                                     const int*, const int*, const int*, Dtype*)

INSTANTIATE_IM2COL_CPU(float);
INSTANTIATE_IM2COL_CPU(double);

}  // namespace crema
