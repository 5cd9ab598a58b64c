#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "crema/syncedmem.hpp"
#include "crema/util/im2col.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// A 2-D convolution geometry, with the sizes im2col derives from it.
struct Geometry2d {
  int channels, height, width;
  int kernel_h, kernel_w;
  int pad_h = 0, pad_w = 0;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;

  int output_h() const {
    return (height + 2 * pad_h - (dilation_h * (kernel_h - 1) + 1)) / stride_h + 1;
  }
  int output_w() const {
    return (width + 2 * pad_w - (dilation_w * (kernel_w - 1) + 1)) / stride_w + 1;
  }
  int im_count() const { return channels * height * width; }
  int col_count() const { return channels * kernel_h * kernel_w * output_h() * output_w(); }
};

// An N-D geometry: the arrays the N-D functions take.
struct GeometryNd {
  std::vector<int> im_shape;  // channels, spatial...
  std::vector<int> kernel, pad, stride, dilation;

  int num_spatial_axes() const { return static_cast<int>(kernel.size()); }
  std::vector<int> col_shape() const {
    std::vector<int> shape = {im_shape[0]};
    for (int axis = 0; axis < num_spatial_axes(); ++axis) {
      shape[0] *= kernel[axis];
      const int extent = dilation[axis] * (kernel[axis] - 1) + 1;
      shape.push_back((im_shape[axis + 1] + 2 * pad[axis] - extent) / stride[axis] + 1);
    }
    return shape;
  }
  int im_count() const { return Product(im_shape); }
  int col_count() const { return Product(col_shape()); }
  static int Product(const std::vector<int>& values) {
    return std::accumulate(values.begin(), values.end(), 1, std::multiplies<int>());
  }
};

GeometryNd ToNd(const Geometry2d& g) {
  return {{g.channels, g.height, g.width},
          {g.kernel_h, g.kernel_w},
          {g.pad_h, g.pad_w},
          {g.stride_h, g.stride_w},
          {g.dilation_h, g.dilation_w}};
}

template <typename Dtype>
std::vector<Dtype> Im2col(const std::vector<Dtype>& image, const Geometry2d& g) {
  std::vector<Dtype> columns(g.col_count(), Dtype(-1));
  im2col_cpu(image.data(), g.channels, g.height, g.width, g.kernel_h, g.kernel_w, g.pad_h, g.pad_w,
             g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, columns.data());
  return columns;
}

template <typename Dtype>
std::vector<Dtype> Col2im(const std::vector<Dtype>& columns, const Geometry2d& g) {
  // Garbage in the image checks that col2im zeroes it before accumulating.
  std::vector<Dtype> image(g.im_count(), Dtype(7));
  col2im_cpu(columns.data(), g.channels, g.height, g.width, g.kernel_h, g.kernel_w, g.pad_h,
             g.pad_w, g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, image.data());
  return image;
}

template <typename Dtype>
std::vector<Dtype> Im2colNd(const std::vector<Dtype>& image, const GeometryNd& g) {
  std::vector<Dtype> columns(g.col_count(), Dtype(-1));
  const std::vector<int> col_shape = g.col_shape();
  im2col_nd_cpu(image.data(), g.num_spatial_axes(), g.im_shape.data(), col_shape.data(),
                g.kernel.data(), g.pad.data(), g.stride.data(), g.dilation.data(), columns.data());
  return columns;
}

template <typename Dtype>
std::vector<Dtype> Col2imNd(const std::vector<Dtype>& columns, const GeometryNd& g) {
  std::vector<Dtype> image(g.im_count(), Dtype(7));
  const std::vector<int> col_shape = g.col_shape();
  col2im_nd_cpu(columns.data(), g.num_spatial_axes(), g.im_shape.data(), col_shape.data(),
                g.kernel.data(), g.pad.data(), g.stride.data(), g.dilation.data(), image.data());
  return image;
}

template <typename Dtype>
std::vector<Dtype> Iota(int count, Dtype first) {
  std::vector<Dtype> values(count);
  std::iota(values.begin(), values.end(), first);
  return values;
}

template <typename Dtype>
std::vector<Dtype> RandomValues(int count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> distribution(-1.0, 1.0);
  std::vector<Dtype> values(count);
  for (Dtype& value : values) value = static_cast<Dtype>(distribution(generator));
  return values;
}

template <typename Dtype>
double Dot(const std::vector<Dtype>& a, const std::vector<Dtype>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

// For every column entry of a 3-D geometry, the image element it reads (-1 in
// the padding): a direct transcription of the layout, written independently
// of the library's multi-index walk, as the reference for the N-D code.
std::vector<int> NaiveColumnSources3d(const GeometryNd& g) {
  const std::vector<int> out = g.col_shape();
  const int depth = g.im_shape[1], height = g.im_shape[2], width = g.im_shape[3];
  std::vector<int> sources;
  for (int c = 0; c < g.im_shape[0]; ++c) {
    for (int kd = 0; kd < g.kernel[0]; ++kd) {
      for (int kh = 0; kh < g.kernel[1]; ++kh) {
        for (int kw = 0; kw < g.kernel[2]; ++kw) {
          for (int od = 0; od < out[1]; ++od) {
            for (int oh = 0; oh < out[2]; ++oh) {
              for (int ow = 0; ow < out[3]; ++ow) {
                const int d = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
                const int h = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
                const int w = ow * g.stride[2] - g.pad[2] + kw * g.dilation[2];
                const bool inside =
                    d >= 0 && d < depth && h >= 0 && h < height && w >= 0 && w < width;
                sources.push_back(inside ? ((c * depth + d) * height + h) * width + w : -1);
              }
            }
          }
        }
      }
    }
  }
  return sources;
}

template <typename Dtype>
std::vector<Dtype> NaiveIm2col3d(const std::vector<Dtype>& image, const GeometryNd& g) {
  const std::vector<int> sources = NaiveColumnSources3d(g);
  std::vector<Dtype> columns(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    columns[i] = sources[i] >= 0 ? image[sources[i]] : Dtype(0);
  }
  return columns;
}

template <typename Dtype>
std::vector<Dtype> NaiveCol2im3d(const std::vector<Dtype>& columns, const GeometryNd& g) {
  const std::vector<int> sources = NaiveColumnSources3d(g);
  std::vector<Dtype> image(g.im_count(), Dtype(0));
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i] >= 0) image[sources[i]] += columns[i];
  }
  return image;
}

template <typename Dtype>
std::vector<Dtype> Values(std::initializer_list<double> values) {
  std::vector<Dtype> result;
  for (double value : values) result.push_back(static_cast<Dtype>(value));
  return result;
}

template <typename Dtype>
void ExpectAllNearRelative(const std::vector<Dtype>& expected, const std::vector<Dtype>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  const double tolerance = sizeof(Dtype) == sizeof(float) ? 1e-5 : 1e-12;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(expected[i], actual[i], tolerance * (1 + std::abs(expected[i]))) << "at " << i;
  }
}

// Geometries that exercise padding, stride and dilation, alone and together.
std::vector<Geometry2d> Mixed2dGeometries() {
  std::vector<Geometry2d> geometries;
  geometries.push_back({3, 5, 6, 3, 3});
  Geometry2d padded_strided{2, 7, 5, 3, 2};
  padded_strided.pad_h = 1;
  padded_strided.pad_w = 2;
  padded_strided.stride_h = 2;
  padded_strided.stride_w = 3;
  geometries.push_back(padded_strided);
  Geometry2d dilated{4, 9, 8, 3, 2};
  dilated.pad_h = 2;
  dilated.dilation_h = 2;
  dilated.dilation_w = 3;
  dilated.stride_w = 2;
  geometries.push_back(dilated);
  Geometry2d one_by_one{5, 4, 4, 1, 1};
  geometries.push_back(one_by_one);
  // Stride 1 along rows, as wide as one, two and three 16-value steps (the
  // vector bodies of float im2col/col2im), with channels beyond a group of 4:
  // LeNet's conv2, and wide padded, dilated and strided images.
  geometries.push_back({6, 12, 12, 5, 5});
  Geometry2d wide_padded{5, 9, 37, 5, 3};
  wide_padded.pad_h = 2;
  wide_padded.pad_w = 4;  // wider than the kernel: whole steps of padding
  geometries.push_back(wide_padded);
  Geometry2d wide_dilated{3, 11, 21, 3, 3};
  wide_dilated.pad_h = wide_dilated.pad_w = 3;
  wide_dilated.stride_h = 2;
  wide_dilated.dilation_h = 2;
  wide_dilated.dilation_w = 3;
  geometries.push_back(wide_dilated);
  return geometries;
}

std::vector<GeometryNd> Mixed3dGeometries() {
  return {{{2, 4, 5, 6}, {2, 3, 2}, {0, 1, 1}, {1, 2, 1}, {1, 1, 2}},
          {{3, 5, 4, 7}, {3, 2, 3}, {1, 0, 2}, {2, 1, 3}, {2, 1, 1}}};
}

std::vector<GeometryNd> MixedNdGeometries() {
  std::vector<GeometryNd> geometries = Mixed3dGeometries();
  for (const Geometry2d& g : Mixed2dGeometries()) geometries.push_back(ToNd(g));
  geometries.push_back({{3, 11}, {4}, {2}, {3}, {2}});
  geometries.push_back({{2, 3, 4, 3, 5}, {2, 2, 1, 3}, {1, 0, 0, 1}, {1, 2, 1, 2}, {1, 1, 1, 2}});
  return geometries;
}

template <typename Dtype>
class Im2colTest : public ::testing::Test {};
TYPED_TEST_SUITE(Im2colTest, TestDtypes);

TYPED_TEST(Im2colTest, TwoByTwoKernelStrideOne) {
  using Dtype = TypeParam;
  const Geometry2d g{1, 3, 3, 2, 2};
  // Rows are kernel taps (0,0), (0,1), (1,0), (1,1); columns output positions.
  const auto expected = Values<Dtype>({1, 2, 4, 5,  //
                                       2, 3, 5, 6,  //
                                       4, 5, 7, 8,  //
                                       5, 6, 8, 9});
  EXPECT_EQ(expected, Im2col(Iota<Dtype>(9, 1), g));
}

TYPED_TEST(Im2colTest, PaddingReadsZero) {
  using Dtype = TypeParam;
  Geometry2d g{1, 3, 3, 2, 2};
  g.pad_h = g.pad_w = 1;
  ASSERT_EQ(4, g.output_h());
  const auto expected = Values<Dtype>({0, 0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9,  //
                                       0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0,  //
                                       0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0, 0, 0, 0,  //
                                       1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0, 0, 0, 0, 0});
  EXPECT_EQ(expected, Im2col(Iota<Dtype>(9, 1), g));
}

TYPED_TEST(Im2colTest, StrideTwo) {
  using Dtype = TypeParam;
  Geometry2d g{1, 4, 4, 2, 2};
  g.stride_h = g.stride_w = 2;
  const auto expected = Values<Dtype>({1, 3, 9, 11,   //
                                       2, 4, 10, 12,  //
                                       5, 7, 13, 15,  //
                                       6, 8, 14, 16});
  EXPECT_EQ(expected, Im2col(Iota<Dtype>(16, 1), g));
}

TYPED_TEST(Im2colTest, StrideTwoWithPadding) {
  using Dtype = TypeParam;
  Geometry2d g{1, 3, 3, 2, 2};
  g.pad_h = g.pad_w = 1;
  g.stride_h = g.stride_w = 2;
  const auto expected = Values<Dtype>({0, 0, 0, 5,  //
                                       0, 0, 4, 6,  //
                                       0, 2, 0, 8,  //
                                       1, 3, 7, 9});
  EXPECT_EQ(expected, Im2col(Iota<Dtype>(9, 1), g));
}

TYPED_TEST(Im2colTest, DilationTwo) {
  using Dtype = TypeParam;
  Geometry2d g{1, 4, 4, 2, 2};
  g.dilation_h = g.dilation_w = 2;
  ASSERT_EQ(2, g.output_h());
  const auto expected = Values<Dtype>({1, 2, 5, 6,     //
                                       3, 4, 7, 8,     //
                                       9, 10, 13, 14,  //
                                       11, 12, 15, 16});
  EXPECT_EQ(expected, Im2col(Iota<Dtype>(16, 1), g));
}

TYPED_TEST(Im2colTest, RectangularKernelAndImage) {
  using Dtype = TypeParam;
  // A 2x4 image, 1x3 kernel, stride 1 along width: two output rows of two.
  const Geometry2d g{1, 2, 4, 1, 3};
  const auto expected = Values<Dtype>({1, 2, 5, 6,  //
                                       2, 3, 6, 7,  //
                                       3, 4, 7, 8});
  EXPECT_EQ(expected, Im2col(Iota<Dtype>(8, 1), g));
}

// Rows written col_row_stride apart (one image's place in a matrix of several
// images' columns): the packed rows land at their offsets, the gaps between
// them stay untouched, and col2im reads the same strided rows back.
TYPED_TEST(Im2colTest, StridedRowsHoldThePackedRows) {
  using Dtype = TypeParam;
  Geometry2d strided_w{2, 5, 6, 3, 2};
  strided_w.pad_h = 1;
  strided_w.stride_w = 2;
  strided_w.dilation_h = 2;
  Geometry2d wide{5, 7, 21, 3, 3};
  wide.pad_h = wide.pad_w = 1;
  for (const Geometry2d& g : {strided_w, wide}) {
    const int positions = g.output_h() * g.output_w();
    const int rows = g.col_count() / positions;
    const int row_stride = positions + 5;
    const std::vector<Dtype> image = RandomValues<Dtype>(g.im_count(), 11);
    const std::vector<Dtype> packed = Im2col(image, g);
    std::vector<Dtype> strided(rows * row_stride, Dtype(42));
    im2col_cpu(image.data(), g.channels, g.height, g.width, g.kernel_h, g.kernel_w, g.pad_h,
               g.pad_w, g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, strided.data(),
               row_stride);
    for (int row = 0; row < rows; ++row) {
      for (int i = 0; i < row_stride; ++i) {
        const Dtype expected = i < positions ? packed[row * positions + i] : Dtype(42);
        ASSERT_EQ(expected, strided[row * row_stride + i]) << "row " << row << ", entry " << i;
      }
    }
    std::vector<Dtype> from_strided(g.im_count(), Dtype(7));
    col2im_cpu(strided.data(), g.channels, g.height, g.width, g.kernel_h, g.kernel_w, g.pad_h,
               g.pad_w, g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, from_strided.data(),
               row_stride);
    EXPECT_EQ(Col2im(packed, g), from_strided);
  }
}

// im2row is im2col transposed, value for value, on every mixed geometry
// (padding, strides, dilation, rows wider than 16 values) and on kernels
// wider than a 16-lane step.
TYPED_TEST(Im2colTest, Im2rowIsIm2colTransposed) {
  using Dtype = TypeParam;
  std::vector<Geometry2d> geometries = Mixed2dGeometries();
  Geometry2d wide_kernel{2, 9, 40, 3, 17};
  wide_kernel.pad_w = 3;
  geometries.push_back(wide_kernel);
  Geometry2d strided_first_layer{3, 31, 31, 11, 11};  // AlexNet's conv1, smaller
  strided_first_layer.stride_h = strided_first_layer.stride_w = 4;
  geometries.push_back(strided_first_layer);
  unsigned seed = 31;
  for (const Geometry2d& g : geometries) {
    SCOPED_TRACE(testing::Message() << g.channels << "x" << g.height << "x" << g.width
                                    << ", kernel " << g.kernel_h << "x" << g.kernel_w);
    const auto image = RandomValues<Dtype>(g.im_count(), seed++);
    const std::vector<Dtype> columns = Im2col(image, g);
    const int positions = g.output_h() * g.output_w();
    const int row_length = g.col_count() / positions;
    std::vector<Dtype> rows(g.col_count(), Dtype(-1));
    im2row_cpu(image.data(), g.channels, g.height, g.width, g.kernel_h, g.kernel_w, g.pad_h,
               g.pad_w, g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, rows.data());
    for (int p = 0; p < positions; ++p) {
      for (int r = 0; r < row_length; ++r) {
        ASSERT_EQ(columns[r * positions + p], rows[p * row_length + r])
            << "position " << p << ", entry " << r;
      }
    }
  }
}

TYPED_TEST(Im2colTest, ChannelsStackTheirRows) {
  using Dtype = TypeParam;
  const Geometry2d g{2, 3, 3, 2, 2};
  const auto expected =
      Values<Dtype>({1,  2,  4,  5,  2,  3,  5,  6,  4,  5,  7,  8,  5,  6,  8,  9,
                     10, 11, 13, 14, 11, 12, 14, 15, 13, 14, 16, 17, 14, 15, 17, 18});
  EXPECT_EQ(expected, Im2col(Iota<Dtype>(18, 1), g));
}

TYPED_TEST(Im2colTest, Col2imOfOnesCountsOverlaps) {
  using Dtype = TypeParam;
  const Geometry2d g{1, 3, 3, 2, 2};
  const std::vector<Dtype> ones(g.col_count(), Dtype(1));
  EXPECT_EQ(Values<Dtype>({1, 2, 1, 2, 4, 2, 1, 2, 1}), Col2im(ones, g));
}

TYPED_TEST(Im2colTest, Col2imOfOnesCountsOverlapsWithPadding) {
  using Dtype = TypeParam;
  Geometry2d g{2, 3, 3, 3, 3};
  g.pad_h = g.pad_w = 1;
  const std::vector<Dtype> ones(g.col_count(), Dtype(1));
  EXPECT_EQ(Values<Dtype>({4, 6, 4, 6, 9, 6, 4, 6, 4, 4, 6, 4, 6, 9, 6, 4, 6, 4}), Col2im(ones, g));
}

TYPED_TEST(Im2colTest, Col2imWithStrideAndDilationSkipsUnreadPixels) {
  using Dtype = TypeParam;
  // 5x5 image, 2x2 kernel dilated by 2, stride 2: outputs at 0 and 2 read
  // rows/columns {0, 2} and {2, 4}; odd rows and columns are never read.
  Geometry2d g{1, 5, 5, 2, 2};
  g.stride_h = g.stride_w = 2;
  g.dilation_h = g.dilation_w = 2;
  ASSERT_EQ(2, g.output_h());
  const std::vector<Dtype> ones(g.col_count(), Dtype(1));
  EXPECT_EQ(Values<Dtype>({1, 0, 2, 0, 1,  //
                           0, 0, 0, 0, 0,  //
                           2, 0, 4, 0, 2,  //
                           0, 0, 0, 0, 0,  //
                           1, 0, 2, 0, 1}),
            Col2im(ones, g));
}

TYPED_TEST(Im2colTest, Col2imSumsTheEntriesThatReadAPixel) {
  using Dtype = TypeParam;
  const Geometry2d g{1, 3, 3, 2, 2};
  // Column entry i holds i; pixel (1,1) is read by tap (1,1) at output 0,
  // (1,0) at output 1, (0,1) at output 2 and (0,0) at output 3.
  const std::vector<Dtype> image = Col2im(Iota<Dtype>(16, 0), g);
  EXPECT_EQ(Dtype(12 + 9 + 6 + 3), image[4]);
  EXPECT_EQ(Dtype(0), image[0]);
  EXPECT_EQ(Dtype(15), image[8]);
}

TYPED_TEST(Im2colTest, AdjointOfIm2colIsCol2im) {
  using Dtype = TypeParam;
  unsigned seed = 1;
  for (const Geometry2d& g : Mixed2dGeometries()) {
    const auto image = RandomValues<Dtype>(g.im_count(), seed++);
    const auto columns = RandomValues<Dtype>(g.col_count(), seed++);
    const double lhs = Dot(Im2col(image, g), columns);
    const double rhs = Dot(image, Col2im(columns, g));
    EXPECT_NEAR(lhs, rhs, 1e-4 * (1 + std::abs(lhs)));
  }
}

TYPED_TEST(Im2colTest, NdWithTwoAxesMatches2d) {
  using Dtype = TypeParam;
  unsigned seed = 11;
  for (const Geometry2d& g : Mixed2dGeometries()) {
    const GeometryNd nd = ToNd(g);
    ASSERT_EQ(g.col_count(), nd.col_count());
    const auto image = RandomValues<Dtype>(g.im_count(), seed++);
    EXPECT_EQ(Im2col(image, g), Im2colNd(image, nd));
    const auto columns = RandomValues<Dtype>(g.col_count(), seed++);
    EXPECT_EQ(Col2im(columns, g), Col2imNd(columns, nd));
  }
}

TYPED_TEST(Im2colTest, NdOneAxisByHand) {
  using Dtype = TypeParam;
  // Two channels of length 5, kernel 3, pad 1, stride 2: three outputs
  // reading padded positions {0, 2, 4} + tap.
  const GeometryNd g{{2, 5}, {3}, {1}, {2}, {1}};
  ASSERT_EQ((std::vector<int>{6, 3}), g.col_shape());
  const auto expected = Values<Dtype>({0, 2, 4, 1, 3, 5, 2, 4, 0,  //
                                       0, 7, 9, 6, 8, 10, 7, 9, 0});
  EXPECT_EQ(expected, Im2colNd(Iota<Dtype>(10, 1), g));
  const std::vector<Dtype> ones(g.col_count(), Dtype(1));
  EXPECT_EQ(Values<Dtype>({1, 2, 1, 2, 1, 1, 2, 1, 2, 1}), Col2imNd(ones, g));
}

TYPED_TEST(Im2colTest, NdOneAxisDilated) {
  using Dtype = TypeParam;
  const GeometryNd g{{1, 6}, {2}, {0}, {1}, {3}};
  ASSERT_EQ((std::vector<int>{2, 3}), g.col_shape());
  EXPECT_EQ(Values<Dtype>({1, 2, 3, 4, 5, 6}), Im2colNd(Iota<Dtype>(6, 1), g));
}

TYPED_TEST(Im2colTest, NdThreeAxesMatchesNaiveReference) {
  using Dtype = TypeParam;
  unsigned seed = 21;
  for (const GeometryNd& g : Mixed3dGeometries()) {
    const auto image = RandomValues<Dtype>(g.im_count(), seed++);
    EXPECT_EQ(NaiveIm2col3d(image, g), Im2colNd(image, g));
    const auto columns = RandomValues<Dtype>(g.col_count(), seed++);
    ExpectAllNearRelative(NaiveCol2im3d(columns, g), Col2imNd(columns, g));
  }
}

TYPED_TEST(Im2colTest, NdThreeAxesSmallByHand) {
  using Dtype = TypeParam;
  // A 2x2x2 volume with a 2x2x2 kernel: one output, one column holding the
  // whole volume in order.
  const GeometryNd g{{1, 2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}};
  EXPECT_EQ(Iota<Dtype>(8, 1), Im2colNd(Iota<Dtype>(8, 1), g));
  // With pad 1 on depth only, the first and last outputs along depth each see
  // one plane of zeros.
  const GeometryNd padded{{1, 2, 2, 2}, {2, 2, 2}, {1, 0, 0}, {1, 1, 1}, {1, 1, 1}};
  ASSERT_EQ((std::vector<int>{8, 3, 1, 1}), padded.col_shape());
  const auto expected = Values<Dtype>({0, 1, 5, 0, 2, 6, 0, 3, 7, 0, 4, 8,  //
                                       1, 5, 0, 2, 6, 0, 3, 7, 0, 4, 8, 0});
  EXPECT_EQ(expected, Im2colNd(Iota<Dtype>(8, 1), padded));
}

TYPED_TEST(Im2colTest, NdAdjointOfIm2colIsCol2im) {
  using Dtype = TypeParam;
  unsigned seed = 31;
  for (const GeometryNd& g : MixedNdGeometries()) {
    const auto image = RandomValues<Dtype>(g.im_count(), seed++);
    const auto columns = RandomValues<Dtype>(g.col_count(), seed++);
    const double lhs = Dot(Im2colNd(image, g), columns);
    const double rhs = Dot(image, Col2imNd(columns, g));
    EXPECT_NEAR(lhs, rhs, 1e-4 * (1 + std::abs(lhs)));
  }
}

#ifdef CREMA_CUDA

// Host vectors copied to the device and back through SyncedMemory.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& values) : memory_(values.size() * sizeof(T)) {
    std::memcpy(memory_.mutable_cpu_data(), values.data(), values.size() * sizeof(T));
  }
  explicit DeviceBuffer(size_t count) : memory_(count * sizeof(T)) {}
  const T* gpu() { return static_cast<const T*>(memory_.gpu_data()); }
  T* mutable_gpu() { return static_cast<T*>(memory_.mutable_gpu_data()); }
  std::vector<T> ToHost() {
    const T* host = static_cast<const T*>(memory_.cpu_data());
    return std::vector<T>(host, host + memory_.size() / sizeof(T));
  }

 private:
  SyncedMemory memory_;
};

template <typename Dtype>
class Im2colGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CREMA_SKIP_WITHOUT_GPU();
    Context::set_mode(Context::GPU);
  }
  void TearDown() override { Context::set_mode(Context::CPU); }

  std::vector<Dtype> Im2colGpu(const std::vector<Dtype>& image, const Geometry2d& g) {
    DeviceBuffer<Dtype> image_device(image);
    DeviceBuffer<Dtype> columns_device(g.col_count());
    im2col_gpu(image_device.gpu(), g.channels, g.height, g.width, g.kernel_h, g.kernel_w, g.pad_h,
               g.pad_w, g.stride_h, g.stride_w, g.dilation_h, g.dilation_w,
               columns_device.mutable_gpu());
    return columns_device.ToHost();
  }

  std::vector<Dtype> Col2imGpu(const std::vector<Dtype>& columns, const Geometry2d& g) {
    DeviceBuffer<Dtype> columns_device(columns);
    DeviceBuffer<Dtype> image_device(std::vector<Dtype>(g.im_count(), Dtype(7)));
    col2im_gpu(columns_device.gpu(), g.channels, g.height, g.width, g.kernel_h, g.kernel_w, g.pad_h,
               g.pad_w, g.stride_h, g.stride_w, g.dilation_h, g.dilation_w,
               image_device.mutable_gpu());
    return image_device.ToHost();
  }

  struct NdShapeOnDevice {
    explicit NdShapeOnDevice(const GeometryNd& g)
        : im_shape(g.im_shape),
          col_shape(g.col_shape()),
          kernel(g.kernel),
          pad(g.pad),
          stride(g.stride),
          dilation(g.dilation) {}
    DeviceBuffer<int> im_shape, col_shape, kernel, pad, stride, dilation;
  };

  std::vector<Dtype> Im2colNdGpu(const std::vector<Dtype>& image, const GeometryNd& g) {
    NdShapeOnDevice shape(g);
    DeviceBuffer<Dtype> image_device(image);
    DeviceBuffer<Dtype> columns_device(g.col_count());
    const int num_kernels = g.im_shape[0] * g.col_count() / g.col_shape()[0];
    im2col_nd_gpu(image_device.gpu(), g.num_spatial_axes(), num_kernels, shape.im_shape.gpu(),
                  shape.col_shape.gpu(), shape.kernel.gpu(), shape.pad.gpu(), shape.stride.gpu(),
                  shape.dilation.gpu(), columns_device.mutable_gpu());
    return columns_device.ToHost();
  }

  std::vector<Dtype> Col2imNdGpu(const std::vector<Dtype>& columns, const GeometryNd& g) {
    NdShapeOnDevice shape(g);
    DeviceBuffer<Dtype> columns_device(columns);
    DeviceBuffer<Dtype> image_device(std::vector<Dtype>(g.im_count(), Dtype(7)));
    col2im_nd_gpu(columns_device.gpu(), g.num_spatial_axes(), g.im_count(), shape.im_shape.gpu(),
                  shape.col_shape.gpu(), shape.kernel.gpu(), shape.pad.gpu(), shape.stride.gpu(),
                  shape.dilation.gpu(), image_device.mutable_gpu());
    return image_device.ToHost();
  }
};
TYPED_TEST_SUITE(Im2colGpuTest, TestDtypes);

TYPED_TEST(Im2colGpuTest, Im2colMatchesCpu) {
  using Dtype = TypeParam;
  unsigned seed = 41;
  for (const Geometry2d& g : Mixed2dGeometries()) {
    const auto image = RandomValues<Dtype>(g.im_count(), seed++);
    EXPECT_EQ(Im2col(image, g), this->Im2colGpu(image, g));
  }
}

TYPED_TEST(Im2colGpuTest, Col2imMatchesCpu) {
  using Dtype = TypeParam;
  unsigned seed = 51;
  for (const Geometry2d& g : Mixed2dGeometries()) {
    const auto columns = RandomValues<Dtype>(g.col_count(), seed++);
    ExpectAllNearRelative(Col2im(columns, g), this->Col2imGpu(columns, g));
  }
}

TYPED_TEST(Im2colGpuTest, Col2imIsDeterministic) {
  using Dtype = TypeParam;
  Geometry2d g{3, 17, 19, 5, 5};
  g.pad_h = g.pad_w = 2;
  const auto columns = RandomValues<Dtype>(g.col_count(), 57);
  EXPECT_EQ(this->Col2imGpu(columns, g), this->Col2imGpu(columns, g));
}

TYPED_TEST(Im2colGpuTest, NdIm2colMatchesCpu) {
  using Dtype = TypeParam;
  unsigned seed = 61;
  for (const GeometryNd& g : MixedNdGeometries()) {
    const auto image = RandomValues<Dtype>(g.im_count(), seed++);
    EXPECT_EQ(Im2colNd(image, g), this->Im2colNdGpu(image, g));
  }
}

TYPED_TEST(Im2colGpuTest, NdCol2imMatchesCpu) {
  using Dtype = TypeParam;
  unsigned seed = 71;
  for (const GeometryNd& g : MixedNdGeometries()) {
    const auto columns = RandomValues<Dtype>(g.col_count(), seed++);
    ExpectAllNearRelative(Col2imNd(columns, g), this->Col2imNdGpu(columns, g));
  }
}

#endif  // CREMA_CUDA

}  // namespace
}  // namespace crema
