// Im2col: a forward by hand; forward and backward against a direct gather
// written here (top row c * taps + t holds, at each output position, the input
// that kernel tap t of channel c reads, or 0 in the padding) for strides,
// padding, dilation, rectangular kernels and N-D inputs; numerical gradients;
// and the configuration errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/im2col_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// Tests assign its fields as std::vector<int>{...}: assigning bare braced lists
// trips a false -Wnonnull in GCC 12 in this file.
struct Im2colCase {
  std::vector<int> bottom_shape;                   // N, C, spatial...
  std::vector<int> kernel, stride, pad, dilation;  // one value per spatial axis
  bool force_nd = false;
};

LayerParameter ParamFor(const Im2colCase& c) {
  LayerParameter param;
  param.set_name("columns");
  param.set_type("Im2col");
  ConvolutionParameter* conv = param.mutable_convolution_param();
  conv->set_force_nd_im2col(c.force_nd);
  for (int k : c.kernel) conv->add_kernel_size(k);
  for (int s : c.stride) conv->add_stride(s);
  for (int p : c.pad) conv->add_pad(p);
  for (int d : c.dilation) conv->add_dilation(d);
  return param;
}

// The expected top shape, and the input index (or -1 in the padding) that
// each top element copies.
struct DirectIm2col {
  std::vector<int> top_shape;
  std::vector<int> source;

  explicit DirectIm2col(const Im2colCase& c) {
    const int images = c.bottom_shape[0], channels = c.bottom_shape[1];
    const std::vector<int> in_spatial(c.bottom_shape.begin() + 2, c.bottom_shape.end());
    std::vector<int> out_spatial;
    for (size_t axis = 0; axis < in_spatial.size(); ++axis) {
      const int extent = c.dilation[axis] * (c.kernel[axis] - 1) + 1;
      out_spatial.push_back((in_spatial[axis] + 2 * c.pad[axis] - extent) / c.stride[axis] + 1);
    }
    top_shape.push_back(images);
    top_shape.push_back(channels * Product(c.kernel));
    top_shape.insert(top_shape.end(), out_spatial.begin(), out_spatial.end());
    const auto taps = AllIndices(c.kernel);
    const auto positions = AllIndices(out_spatial);
    for (int n = 0; n < images; ++n) {
      for (int channel = 0; channel < channels; ++channel) {
        for (const auto& tap : taps) {
          for (const auto& position : positions) {
            int index = n * channels + channel;
            for (size_t axis = 0; axis < in_spatial.size() && index >= 0; ++axis) {
              const int pos =
                  position[axis] * c.stride[axis] - c.pad[axis] + tap[axis] * c.dilation[axis];
              index = pos >= 0 && pos < in_spatial[axis] ? index * in_spatial[axis] + pos : -1;
            }
            source.push_back(index);
          }
        }
      }
    }
  }
};

template <typename TypeParam>
class Im2colLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;

  static void Fill(Blob<Dtype>* blob) {
    FillerParameter filler;
    filler.set_type("gaussian");
    GetFiller<Dtype>(filler)->Fill(blob);
  }

  void CheckAgainstDirect(const Im2colCase& c) {
    Context::set_random_seed(1701);
    Blob<Dtype> bottom(c.bottom_shape), top;
    Fill(&bottom);
    std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
    Im2colLayer<Dtype> layer(ParamFor(c));
    layer.SetUp(bottom_vec, top_vec);
    EXPECT_TRUE(layer.blobs().empty());
    const DirectIm2col direct(c);
    ASSERT_EQ(top.shape(), direct.top_shape);

    layer.Forward(bottom_vec, top_vec);
    for (int i = 0; i < top.count(); ++i) {
      const Dtype expected = direct.source[i] >= 0 ? bottom.cpu_data()[direct.source[i]] : 0;
      ASSERT_EQ(top.cpu_data()[i], expected) << i;
    }

    Blob<Dtype> top_diff(top.shape());
    Fill(&top_diff);
    std::copy(top_diff.cpu_data(), top_diff.cpu_data() + top.count(), top.mutable_cpu_diff());
    cpu_set(bottom.count(), Dtype(5), bottom.mutable_cpu_diff());  // must be overwritten
    layer.Backward(top_vec, {true}, bottom_vec);
    std::vector<double> expected_diff(bottom.count(), 0.0);
    for (int i = 0; i < top.count(); ++i) {
      if (direct.source[i] >= 0) expected_diff[direct.source[i]] += top_diff.cpu_data()[i];
    }
    for (int i = 0; i < bottom.count(); ++i) {
      ASSERT_NEAR(bottom.cpu_diff()[i], expected_diff[i], 1e-5) << i;
    }
  }

  void ExpectSetUpError(const LayerParameter& param, const std::vector<int>& shape,
                        const std::string& phrase) {
    Blob<Dtype> bottom(shape), top;
    std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
    Im2colLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom_vec, top_vec);
      FAIL() << "expected an Error mentioning '" << phrase << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("'" + param.name() + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("Im2col"), std::string::npos) << message;
      EXPECT_NE(message.find(phrase), std::string::npos) << message;
    }
  }
};
TYPED_TEST_SUITE(Im2colLayerTest, TestDtypesAndDevices);

TYPED_TEST(Im2colLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(1, 1, 3, 3), top;
  for (int i = 0; i < 9; ++i) bottom.mutable_cpu_data()[i] = i + 1;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param;
  param.mutable_convolution_param()->add_kernel_size(2);
  Im2colLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  ASSERT_EQ(top.shape(), (std::vector<int>{1, 4, 2, 2}));
  // One row per kernel tap (top-left, top-right, bottom-left, bottom-right),
  // one column per 2x2 window of the input 1..9.
  const Dtype expected[] = {1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(Im2colLayerTest, StridePadDilationRectangular) {
  Im2colCase c;
  c.bottom_shape = std::vector<int>{2, 3, 6, 5};
  c.kernel = std::vector<int>{3, 2};
  c.stride = std::vector<int>{2, 1};
  c.pad = std::vector<int>{1, 2};
  c.dilation = std::vector<int>{1, 2};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(Im2colLayerTest, TwoSpatialAxesThroughNdIm2col) {
  Im2colCase c;
  c.bottom_shape = std::vector<int>{2, 2, 5, 6};
  c.kernel = std::vector<int>{2, 3};
  c.stride = std::vector<int>{1, 2};
  c.pad = std::vector<int>{1, 0};
  c.dilation = std::vector<int>{2, 1};
  c.force_nd = true;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(Im2colLayerTest, ThreeSpatialAxes) {
  Im2colCase c;
  c.bottom_shape = std::vector<int>{2, 2, 3, 4, 3};
  c.kernel = std::vector<int>{2, 2, 3};
  c.stride = std::vector<int>{1, 2, 1};
  c.pad = std::vector<int>{0, 1, 1};
  c.dilation = std::vector<int>{1, 1, 1};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(Im2colLayerTest, OneByOneKernelCopies) {
  Im2colCase c;
  c.bottom_shape = std::vector<int>{2, 3, 3, 2};
  c.kernel = std::vector<int>{1, 1};
  c.stride = std::vector<int>{1, 1};
  c.pad = std::vector<int>{0, 0};
  c.dilation = std::vector<int>{1, 1};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(Im2colLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  Blob<Dtype> bottom(2, 3, 4, 5), top;
  this->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param;
  param.mutable_convolution_param()->add_kernel_size(3);
  param.mutable_convolution_param()->add_stride(2);
  param.mutable_convolution_param()->add_pad(1);
  Im2colLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
}

TYPED_TEST(Im2colLayerTest, GradientNd) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  Blob<Dtype> bottom(std::vector<int>{2, 2, 3, 4, 3}), top;
  this->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param;
  param.mutable_convolution_param()->add_kernel_size(2);
  param.mutable_convolution_param()->add_dilation(2);
  param.mutable_convolution_param()->add_pad(1);
  Im2colLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
}

TYPED_TEST(Im2colLayerTest, BadConfigurationsThrow) {
  Im2colCase c;
  c.bottom_shape = std::vector<int>{2, 3, 4, 4};
  c.kernel = std::vector<int>{3};

  LayerParameter param = ParamFor(c);
  param.mutable_convolution_param()->clear_kernel_size();
  this->ExpectSetUpError(param, c.bottom_shape, "missing kernel_size");

  param = ParamFor(c);
  param.mutable_convolution_param()->add_stride(0);
  this->ExpectSetUpError(param, c.bottom_shape, "stride must be positive");

  param = ParamFor(c);
  param.mutable_convolution_param()->add_dilation(3);  // extent 7 > 4
  this->ExpectSetUpError(param, c.bottom_shape, "larger than the padded input");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_kernel_h(2);
  param.mutable_convolution_param()->set_kernel_w(2);
  this->ExpectSetUpError(param, c.bottom_shape, "not both");
}

TYPED_TEST(Im2colLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Im2col");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Im2col");
}

}  // namespace
}  // namespace crema
