#include "crema/util/im2col.hpp"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "crema/common.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CREMA_IM2COL_AVX512 1
// GCC 12's AVX-512 headers pass an uninitialised vector as the unused merge
// operand of unmasked intrinsics (GCC bug 105593): a false warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include "crema/util/cpu_features.hpp"
#endif

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

// The outputs o in [0, count) whose input first + o * stride lies in
// [0, size): [*begin, *end), empty with *begin == *end.
inline void InsideRange(int first, int stride, int size, int count, int* begin, int* end) {
  // A division costs more than a tap's whole copy at LeNet's sizes; stride 1
  // (most layers) needs none.
  const auto steps = [stride](int distance) {
    return stride == 1 ? distance : (distance + stride - 1) / stride;
  };
  const int inside_begin = first >= 0 ? 0 : steps(-first);
  *end = size > first ? std::min(count, steps(size - first)) : 0;
  *begin = std::min(inside_begin, *end);
}

// The arguments of the 2-D functions, with the sizes derived from them.
struct Geometry2d {
  Geometry2d(int channels, int height, int width, int kernel_h, int kernel_w, int pad_h, int pad_w,
             int stride_h, int stride_w, int dilation_h, int dilation_w, int col_row_stride)
      : channels(channels),
        height(height),
        width(width),
        kernel_h(kernel_h),
        kernel_w(kernel_w),
        pad_h(pad_h),
        pad_w(pad_w),
        stride_h(stride_h),
        stride_w(stride_w),
        dilation_h(dilation_h),
        dilation_w(dilation_w),
        output_h(OutputSize(height, kernel_h, pad_h, stride_h, dilation_h)),
        output_w(OutputSize(width, kernel_w, pad_w, stride_w, dilation_w)),
        col_row_stride(col_row_stride ? col_row_stride : output_h * output_w) {}

  int channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h,
      dilation_w;
  int output_h, output_w;
  int col_row_stride;  // from one (channel, tap) row of data_col to the next
};

// One row of data_col: a (channel, kernel tap) pair, output_h x output_w
// entries. Output rows [oh_begin, oh_end) read input rows inside the image,
// and in those rows the entries [ow_begin, ow_end) read inside columns; every
// other entry reads padding.
struct Tap {
  int col_offset;  // the row's first entry in data_col
  int im_offset;   // the image offset (oh, ow) = (0, 0) reads; may lie outside
  int oh_begin, oh_end, ow_begin, ow_end;
};

// Both im2col and col2im walk the same taps, in data_col's order; only what
// they do with a tap differs. Always inlined, so that a caller compiled for
// AVX-512 inlines its tap visit too.
template <typename TapVisit>
__attribute__((always_inline)) inline void VisitTaps(const Geometry2d& g, TapVisit visit) {
  Tap tap;
  tap.col_offset = 0;
  for (int channel = 0; channel < g.channels; ++channel) {
    for (int kh = 0; kh < g.kernel_h; ++kh) {
      const int ih0 = InputPosition(0, kh, g.pad_h, g.stride_h, g.dilation_h);
      InsideRange(ih0, g.stride_h, g.height, g.output_h, &tap.oh_begin, &tap.oh_end);
      for (int kw = 0; kw < g.kernel_w; ++kw) {
        const int iw0 = InputPosition(0, kw, g.pad_w, g.stride_w, g.dilation_w);
        InsideRange(iw0, g.stride_w, g.width, g.output_w, &tap.ow_begin, &tap.ow_end);
        tap.im_offset = (channel * g.height + ih0) * g.width + iw0;
        visit(tap);
        tap.col_offset += g.col_row_stride;
      }
    }
  }
}

// Plain loops: rows are a few values long (see CMakeLists.txt).
template <typename Dtype>
void Im2colPlain(const Dtype* data_im, const Geometry2d& g, Dtype* data_col) {
  const int row_step = g.stride_h * g.width;
  VisitTaps(g, [&](const Tap& tap) {
    Dtype* col = data_col + tap.col_offset;
    for (int oh = 0; oh < g.output_h; ++oh, col += g.output_w) {
      const bool inside = oh >= tap.oh_begin && oh < tap.oh_end;
      const int ow_begin = inside ? tap.ow_begin : 0, ow_end = inside ? tap.ow_end : 0;
      for (int ow = 0; ow < ow_begin; ++ow) col[ow] = Dtype(0);
      const int row = tap.im_offset + oh * row_step;
      if (g.stride_w == 1) {
        for (int ow = ow_begin; ow < ow_end; ++ow) col[ow] = data_im[row + ow];
      } else {
        for (int ow = ow_begin; ow < ow_end; ++ow) col[ow] = data_im[row + ow * g.stride_w];
      }
      for (int ow = ow_end; ow < g.output_w; ++ow) col[ow] = Dtype(0);
    }
  });
}

// Each image value sums its entries in tap order.
template <typename Dtype>
void Col2imPlain(const Dtype* data_col, const Geometry2d& g, Dtype* data_im) {
  const int row_step = g.stride_h * g.width;
  VisitTaps(g, [&](const Tap& tap) {
    const Dtype* col = data_col + tap.col_offset + tap.oh_begin * g.output_w;
    for (int oh = tap.oh_begin; oh < tap.oh_end; ++oh, col += g.output_w) {
      const int row = tap.im_offset + oh * row_step;
      if (g.stride_w == 1) {
        for (int ow = tap.ow_begin; ow < tap.ow_end; ++ow) data_im[row + ow] += col[ow];
      } else {
        for (int ow = tap.ow_begin; ow < tap.ow_end; ++ow) {
          data_im[row + ow * g.stride_w] += col[ow];
        }
      }
    }
  });
}

// Output position by position, each reading its receptive field in
// data_col's row order.
template <typename Dtype>
void Im2rowPlain(const Dtype* data_im, const Geometry2d& g, Dtype* data_rows) {
  Dtype* row = data_rows;
  for (int oh = 0; oh < g.output_h; ++oh) {
    for (int ow = 0; ow < g.output_w; ++ow) {
      for (int channel = 0; channel < g.channels; ++channel) {
        for (int kh = 0; kh < g.kernel_h; ++kh) {
          const int ih = InputPosition(oh, kh, g.pad_h, g.stride_h, g.dilation_h);
          for (int kw = 0; kw < g.kernel_w; ++kw) {
            const int iw = InputPosition(ow, kw, g.pad_w, g.stride_w, g.dilation_w);
            const bool inside = InsideAxis(ih, g.height) && InsideAxis(iw, g.width);
            *row++ = inside ? data_im[(channel * g.height + ih) * g.width + iw] : Dtype(0);
          }
        }
      }
    }
  }
}

#ifdef CREMA_IM2COL_AVX512
// Float rows at stride_w 1 go 16 lanes at a time, under masks: a few values
// per row (8 for LeNet's conv2) cost one load and one store instead of a
// vector step and a scalar tail. Both functions put the same values in the
// same places as the plain loops, and col2im adds each image value's entries
// in the same order, so results are bit for bit the plain loops'.
// BM_im2col/BM_col2im in tests/bench_math_functions.cpp time them.
// Lanes l of a 16-lane step with begin <= l < end.
CREMA_AVX512 inline __mmask16 LanesBetween(int begin, int end) {
  const auto below = [](int count) {
    return count <= 0 ? 0u : count >= 16 ? 0xFFFFu : (1u << count) - 1;
  };
  return static_cast<__mmask16>(below(end) & ~below(begin));
}

CREMA_AVX512 inline void ZeroAvx512(float* values, int count) {
  for (int i = 0; i < count; i += 16) {
    _mm512_mask_storeu_ps(values + i, LanesBetween(0, count - i), _mm512_setzero_ps());
  }
}

// Tap by tap: the rows of padding above and below the image are one
// contiguous run each; the rows inside go in 16-lane steps with the masks
// computed once per tap, two rows to a step where two fit (LeNet's conv2
// has rows of 8). Masked-off lanes are neither read nor faulted on.
CREMA_AVX512 void Im2colAvx512(const float* data_im, const Geometry2d& g, float* data_col) {
  // Locals, not g's fields: vector stores may alias anything, so the
  // compiler would reload those after every store.
  const int row_step = g.stride_h * g.width;
  const int output_w = g.output_w, output_h = g.output_h;
  VisitTaps(g, [&, row_step, output_w, output_h](const Tap& tap) CREMA_AVX512 {
    const int oh_begin = tap.oh_begin, oh_end = tap.oh_end;
    const int ow_begin = tap.ow_begin, ow_end = tap.ow_end;
    float* col = data_col + tap.col_offset;
    ZeroAvx512(col, oh_begin * output_w);
    ZeroAvx512(col + oh_end * output_w, (output_h - oh_end) * output_w);
    col += oh_begin * output_w;
    const float* im = data_im + (tap.im_offset + oh_begin * row_step);
    const int rows = oh_end - oh_begin;
    if (2 * output_w <= 16) {
      // The second row's lanes start at output_w.
      const __mmask16 first = LanesBetween(ow_begin, ow_end);
      const __mmask16 second = static_cast<__mmask16>(first << output_w);
      const __mmask16 pair = LanesBetween(0, 2 * output_w);
      int row = 0;
      if (output_w == 8 && ow_begin == 0 && ow_end == 8) {
        // Two whole rows of 8 (LeNet's conv2 unpadded): plain 8-lane loads,
        // which cost less than masked 16-lane ones.
        for (; row + 2 <= rows; row += 2, col += 16, im += 2 * row_step) {
          const __m512d low = _mm512_castps_pd(_mm512_castps256_ps512(_mm256_loadu_ps(im)));
          const __m256d high = _mm256_castps_pd(_mm256_loadu_ps(im + row_step));
          _mm512_storeu_ps(col, _mm512_castpd_ps(_mm512_insertf64x4(low, high, 1)));
        }
      }
      for (; row + 2 <= rows; row += 2, col += 2 * output_w, im += 2 * row_step) {
        const __m512 values = _mm512_maskz_loadu_ps(first, im);
        _mm512_mask_storeu_ps(col, pair,
                              _mm512_mask_loadu_ps(values, second, im + (row_step - output_w)));
      }
      if (row < rows) {
        _mm512_mask_storeu_ps(col, LanesBetween(0, output_w), _mm512_maskz_loadu_ps(first, im));
      }
      return;
    }
    for (int ow = 0; ow < output_w; ow += 16) {
      const __mmask16 inside = LanesBetween(ow_begin - ow, ow_end - ow);
      const __mmask16 lanes = LanesBetween(0, output_w - ow);
      for (int row = 0; row < rows; ++row) {
        _mm512_mask_storeu_ps(col + (row * output_w + ow), lanes,
                              _mm512_maskz_loadu_ps(inside, im + (row * row_step + ow)));
      }
    }
  });
}

// col2im turned around: each 16 values of an image row are summed in
// registers from the entries that read them, taps in data_col's order, and
// stored once. Adding into the image row by row instead would load values
// just stored at an address one value off, which the CPU cannot forward.
// `group` channels go together, so that their independent sums hide each
// other's latency.
template <int group>
CREMA_AVX512 __attribute__((always_inline)) inline void Col2imChannelsAvx512(
    const float* channel_col, size_t channel_col_step, const Geometry2d& g, float* channel_im) {
  // Locals, not g's fields, as in Im2colAvx512.
  const int height = g.height, width = g.width, kernel_h = g.kernel_h, kernel_w = g.kernel_w;
  const int pad_h = g.pad_h, pad_w = g.pad_w, stride_h = g.stride_h;
  const int dilation_h = g.dilation_h, dilation_w = g.dilation_w;
  const int output_h = g.output_h, output_w = g.output_w, col_row_stride = g.col_row_stride;
  const int channel_im_step = height * width;
  for (int ih = 0; ih < height; ++ih) {
    for (int iw = 0; iw < width; iw += 16) {
      __m512 sum[group];
      for (int c = 0; c < group; ++c) sum[c] = _mm512_setzero_ps();
      for (int kh = 0; kh < kernel_h; ++kh) {
        const int oh_strided = ih + pad_h - kh * dilation_h;
        const int oh = oh_strided / stride_h;
        if (oh_strided < 0 || oh_strided % stride_h != 0 || oh >= output_h) continue;
        const float* col =
            channel_col + static_cast<size_t>(kh) * kernel_w * col_row_stride + oh * output_w;
        for (int kw = 0; kw < kernel_w; ++kw, col += col_row_stride) {
          const int ow = iw + pad_w - kw * dilation_w;  // lane 0's entry
          const __mmask16 inside = LanesBetween(-ow, output_w - ow);
          for (int c = 0; c < group; ++c) {
            sum[c] = _mm512_add_ps(sum[c],
                                   _mm512_maskz_loadu_ps(inside, col + c * channel_col_step + ow));
          }
        }
      }
      const __mmask16 lanes = LanesBetween(0, width - iw);
      for (int c = 0; c < group; ++c) {
        _mm512_mask_storeu_ps(channel_im + c * channel_im_step + ih * width + iw, lanes, sum[c]);
      }
    }
  }
}

CREMA_AVX512 void Col2imAvx512(const float* data_col, const Geometry2d& g, float* data_im) {
  const size_t channel_col_step = static_cast<size_t>(g.kernel_h) * g.kernel_w * g.col_row_stride;
  const int channel_im_step = g.height * g.width;
  int channel = 0;
  for (; channel + 4 <= g.channels; channel += 4) {
    Col2imChannelsAvx512<4>(data_col + channel * channel_col_step, channel_col_step, g,
                            data_im + channel * channel_im_step);
  }
  for (; channel < g.channels; ++channel) {
    Col2imChannelsAvx512<1>(data_col + channel * channel_col_step, channel_col_step, g,
                            data_im + channel * channel_im_step);
  }
}
// A kernel row's taps read consecutive image values (dilation_w 1): one
// masked step each, kernel_w lanes (at most 16).
CREMA_AVX512 void Im2rowAvx512(const float* data_im, const Geometry2d& g, float* data_rows) {
  // Locals, not g's fields, as in Im2colAvx512.
  const int channels = g.channels, height = g.height, width = g.width;
  const int kernel_h = g.kernel_h, kernel_w = g.kernel_w, pad_h = g.pad_h, pad_w = g.pad_w;
  const int stride_h = g.stride_h, stride_w = g.stride_w, dilation_h = g.dilation_h;
  const int output_h = g.output_h, output_w = g.output_w;
  const __mmask16 taps = LanesBetween(0, kernel_w);
  float* row = data_rows;
  for (int oh = 0; oh < output_h; ++oh) {
    for (int ow = 0; ow < output_w; ++ow) {
      const int iw0 = ow * stride_w - pad_w;  // the column tap 0 reads
      const __mmask16 inside = taps & LanesBetween(-iw0, width - iw0);
      for (int channel = 0; channel < channels; ++channel) {
        for (int kh = 0; kh < kernel_h; ++kh, row += kernel_w) {
          const int ih = oh * stride_h - pad_h + kh * dilation_h;
          const __m512 values =
              InsideAxis(ih, height)
                  ? _mm512_maskz_loadu_ps(inside, data_im + ((channel * height + ih) * width + iw0))
                  : _mm512_setzero_ps();
          _mm512_mask_storeu_ps(row, taps, values);
        }
      }
    }
  }
}
#endif  // CREMA_IM2COL_AVX512

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

// The N-D walk: each column row is one (channel, kernel tap) pair, and its
// entries walk every output position.
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
  const Geometry2d g(channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w,
                     dilation_h, dilation_w, col_row_stride);
#ifdef CREMA_IM2COL_AVX512
  if constexpr (std::is_same<Dtype, float>::value) {
    if (g.stride_w == 1 && HasAvx512()) return Im2colAvx512(data_im, g, data_col);
  }
#endif
  Im2colPlain(data_im, g, data_col);
}

template <typename Dtype>
void col2im_cpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im, int col_row_stride) {
  const Geometry2d g(channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w,
                     dilation_h, dilation_w, col_row_stride);
#ifdef CREMA_IM2COL_AVX512
  if constexpr (std::is_same<Dtype, float>::value) {
    // Every image value is written: no zeroing first.
    if (g.stride_w == 1 && HasAvx512()) return Col2imAvx512(data_col, g, data_im);
  }
#endif
  std::fill(data_im, data_im + channels * height * width, Dtype(0));
  Col2imPlain(data_col, g, data_im);
}

template <typename Dtype>
void im2row_cpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_rows) {
  const Geometry2d g(channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w,
                     dilation_h, dilation_w, 0);
#ifdef CREMA_IM2COL_AVX512
  if constexpr (std::is_same<Dtype, float>::value) {
    if (im2row_vectorised<Dtype>(kernel_w, dilation_w)) {
      return Im2rowAvx512(data_im, g, data_rows);
    }
  }
#endif
  Im2rowPlain(data_im, g, data_rows);
}

template <typename Dtype>
bool im2row_vectorised(int kernel_w, int dilation_w) {
#ifdef CREMA_IM2COL_AVX512
  return std::is_same<Dtype, float>::value && dilation_w == 1 && kernel_w <= 16 && HasAvx512();
#else
  return false;
#endif
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
  template void im2row_cpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*);                                                   \
  template bool im2row_vectorised<Dtype>(int, int);                                               \
  template void im2col_nd_cpu<Dtype>(const Dtype*, int, const int*, const int*, const int*,       \
                                     const int*, const int*, const int*, Dtype*);                 \
  template void col2im_nd_cpu<Dtype>(const Dtype*, int, const int*, const int*, const int*,       \
                                     const int*, const int*, const int*, Dtype*)

INSTANTIATE_IM2COL_CPU(float);
INSTANTIATE_IM2COL_CPU(double);

}  // namespace crema
