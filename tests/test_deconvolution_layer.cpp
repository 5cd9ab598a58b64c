// Deconvolution: a forward by hand; forward and backward against a direct
// transposed convolution written here (each bottom value scatters a scaled
// copy of its filter into the top) for strides, padding, dilation, groups,
// N-D inputs, several bottoms and no bias; the adjoint property with
// Convolution; numerical gradients; and the configuration errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/conv_layer.hpp"
#include "crema/layers/deconv_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// A deconvolution to test: the bottom's shape (N, C, spatial...) and the
// parameters (one value for every axis, or one per axis).
struct DeconvCase {
  std::vector<int> bottom_shape;
  std::vector<int> kernel, stride, pad, dilation;
  int num_output = 2;
  int group = 1;
  bool bias = true;
  int num_bottoms = 1;
};

LayerParameter ParamFor(const DeconvCase& c, const std::string& type = "Deconvolution") {
  LayerParameter param;
  param.set_name("deconv");
  param.set_type(type);
  ConvolutionParameter* conv = param.mutable_convolution_param();
  conv->set_num_output(c.num_output);
  conv->set_group(c.group);
  conv->set_bias_term(c.bias);
  for (int k : c.kernel) conv->add_kernel_size(k);
  for (int s : c.stride) conv->add_stride(s);
  for (int p : c.pad) conv->add_pad(p);
  for (int d : c.dilation) conv->add_dilation(d);
  conv->mutable_weight_filler()->set_type("gaussian");
  conv->mutable_bias_filler()->set_type("gaussian");
  return param;
}

// A direct transposed convolution: bottom position q with kernel tap t lands on
// top position q * stride - pad + t * dilation.
struct DirectDeconvolution {
  int images, channels, num_output, group;
  std::vector<int> in_spatial, out_spatial, kernel, stride, pad, dilation;

  explicit DirectDeconvolution(const DeconvCase& c) : num_output(c.num_output), group(c.group) {
    const int spatial_axes = static_cast<int>(c.bottom_shape.size()) - 2;
    images = c.bottom_shape[0];
    channels = c.bottom_shape[1];
    in_spatial.assign(c.bottom_shape.begin() + 2, c.bottom_shape.end());
    kernel = PerAxis(c.kernel, spatial_axes, 0);
    stride = PerAxis(c.stride, spatial_axes, 1);
    pad = PerAxis(c.pad, spatial_axes, 0);
    dilation = PerAxis(c.dilation, spatial_axes, 1);
    for (int axis = 0; axis < spatial_axes; ++axis) {
      out_spatial.push_back(stride[axis] * (in_spatial[axis] - 1) +
                            dilation[axis] * (kernel[axis] - 1) + 1 - 2 * pad[axis]);
    }
  }

  std::vector<int> TopShape() const {
    std::vector<int> shape{images, num_output};
    shape.insert(shape.end(), out_spatial.begin(), out_spatial.end());
    return shape;
  }

  // Calls visit(bottom index, weight index, top index) for every product the
  // transposed convolution sums.
  template <typename Visit>
  void ForEachProduct(Visit visit) const {
    const int in_size = Product(in_spatial);
    const int out_size = Product(out_spatial);
    const int kernel_size = Product(kernel);
    const int channels_per_group = channels / group;
    const int outputs_per_group = num_output / group;
    const auto in_positions = AllIndices(in_spatial);
    const auto taps = AllIndices(kernel);
    for (int n = 0; n < images; ++n) {
      for (int c = 0; c < channels; ++c) {
        for (int q = 0; q < in_size; ++q) {
          for (int o = 0; o < outputs_per_group; ++o) {
            const int top_channel = (c / channels_per_group) * outputs_per_group + o;
            for (int t = 0; t < kernel_size; ++t) {
              int out_offset = 0;
              bool inside = true;
              for (size_t axis = 0; axis < kernel.size(); ++axis) {
                const int pos = in_positions[q][axis] * stride[axis] - pad[axis] +
                                taps[t][axis] * dilation[axis];
                inside = inside && pos >= 0 && pos < out_spatial[axis];
                out_offset = out_offset * out_spatial[axis] + pos;
              }
              if (!inside) continue;
              visit((n * channels + c) * in_size + q, (c * outputs_per_group + o) * kernel_size + t,
                    (n * num_output + top_channel) * out_size + out_offset);
            }
          }
        }
      }
    }
  }
};

template <typename TypeParam>
class DeconvolutionLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;

  static void Fill(Blob<Dtype>* blob) {
    FillerParameter filler;
    filler.set_type("gaussian");
    GetFiller<Dtype>(filler)->Fill(blob);
  }

  static void ExpectClose(const Dtype* actual, const std::vector<double>& expected,
                          const std::string& what) {
    const double tolerance = sizeof(Dtype) == 4 ? 1e-4 : 1e-9;
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_NEAR(actual[i], expected[i], tolerance * std::max(1.0, std::fabs(expected[i])))
          << what << " element " << i;
    }
  }

  void CheckAgainstDirect(const DeconvCase& c) {
    Context::set_random_seed(1701);
    std::vector<std::unique_ptr<Blob<Dtype>>> bottoms, tops;
    std::vector<Blob<Dtype>*> bottom_vec, top_vec;
    for (int b = 0; b < c.num_bottoms; ++b) {
      bottoms.emplace_back(new Blob<Dtype>(c.bottom_shape));
      tops.emplace_back(new Blob<Dtype>());
      Fill(bottoms.back().get());
      bottom_vec.push_back(bottoms.back().get());
      top_vec.push_back(tops.back().get());
    }
    DeconvolutionLayer<Dtype> layer(ParamFor(c));
    layer.SetUp(bottom_vec, top_vec);
    const DirectDeconvolution direct(c);
    std::vector<int> weight_shape{direct.channels, c.num_output / c.group};
    weight_shape.insert(weight_shape.end(), direct.kernel.begin(), direct.kernel.end());
    ASSERT_EQ(layer.blobs()[0]->shape(), weight_shape);
    ASSERT_EQ(layer.blobs().size(), c.bias ? 2u : 1u);
    const Dtype* weights = layer.blobs()[0]->cpu_data();
    const int out_size = Product(direct.out_spatial);

    layer.Forward(bottom_vec, top_vec);
    for (int b = 0; b < c.num_bottoms; ++b) {
      ASSERT_EQ(tops[b]->shape(), direct.TopShape());
      std::vector<double> expected(tops[b]->count(), 0.0);
      if (c.bias) {
        for (size_t i = 0; i < expected.size(); ++i) {
          expected[i] = layer.blobs()[1]->cpu_data()[(i / out_size) % c.num_output];
        }
      }
      const Dtype* input = bottoms[b]->cpu_data();
      direct.ForEachProduct(
          [&](int in, int w, int out) { expected[out] += double(weights[w]) * input[in]; });
      ExpectClose(tops[b]->cpu_data(), expected, "top " + std::to_string(b));
    }

    for (auto& param : layer.blobs()) {
      cpu_set(param->count(), Dtype(0), param->mutable_cpu_diff());
    }
    for (int b = 0; b < c.num_bottoms; ++b) {
      Blob<Dtype> top_diff(tops[b]->shape());
      Fill(&top_diff);
      std::copy(top_diff.cpu_data(), top_diff.cpu_data() + top_diff.count(),
                tops[b]->mutable_cpu_diff());
    }
    layer.Backward(top_vec, std::vector<bool>(c.num_bottoms, true), bottom_vec);
    std::vector<double> weight_diff(layer.blobs()[0]->count(), 0.0);
    std::vector<double> bias_diff(c.num_output, 0.0);
    for (int b = 0; b < c.num_bottoms; ++b) {
      std::vector<double> bottom_diff(bottoms[b]->count(), 0.0);
      const Dtype* input = bottoms[b]->cpu_data();
      const Dtype* top_diff = tops[b]->cpu_diff();
      direct.ForEachProduct([&](int in, int w, int out) {
        bottom_diff[in] += double(weights[w]) * top_diff[out];
        weight_diff[w] += double(input[in]) * top_diff[out];
      });
      for (int i = 0; i < tops[b]->count(); ++i) {
        bias_diff[(i / out_size) % c.num_output] += top_diff[i];
      }
      ExpectClose(bottoms[b]->cpu_diff(), bottom_diff, "bottom diff " + std::to_string(b));
    }
    ExpectClose(layer.blobs()[0]->cpu_diff(), weight_diff, "weight diff");
    if (c.bias) ExpectClose(layer.blobs()[1]->cpu_diff(), bias_diff, "bias diff");
  }

  void CheckGradient(const DeconvCase& c) {
    Context::set_random_seed(1701);
    Blob<Dtype> bottom(c.bottom_shape), top;
    Fill(&bottom);
    std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
    DeconvolutionLayer<Dtype> layer(ParamFor(c));
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradient(&layer, bottom_vec, top_vec);
  }

  void ExpectSetUpError(const LayerParameter& param, const std::vector<int>& shape,
                        const std::string& phrase) {
    Blob<Dtype> bottom(shape), top;
    std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
    DeconvolutionLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom_vec, top_vec);
      FAIL() << "expected an Error mentioning '" << phrase << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("'" + param.name() + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("Deconvolution"), std::string::npos) << message;
      EXPECT_NE(message.find(phrase), std::string::npos) << message;
    }
  }
};
TYPED_TEST_SUITE(DeconvolutionLayerTest, TestDtypesAndDevices);

TYPED_TEST(DeconvolutionLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(1, 1, 2, 2), top;
  const Dtype input[] = {1, 2, 3, 4};
  std::copy(input, input + 4, bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  DeconvCase c;
  c.bottom_shape = {1, 1, 2, 2};
  c.kernel = {2};
  c.num_output = 1;
  DeconvolutionLayer<Dtype> layer(ParamFor(c));
  layer.SetUp(bottom_vec, top_vec);
  const Dtype weights[] = {1, 0, 0, 1};
  std::copy(weights, weights + 4, layer.blobs()[0]->mutable_cpu_data());
  layer.blobs()[1]->mutable_cpu_data()[0] = 1;
  layer.Forward(bottom_vec, top_vec);
  ASSERT_EQ(top.shape(), (std::vector<int>{1, 1, 3, 3}));
  // Each input stamps the diagonal filter at its position: top(i, j) is
  // in(i, j) + in(i - 1, j - 1), plus the bias.
  const Dtype expected[] = {2, 3, 1, 4, 6, 3, 1, 4, 5};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(DeconvolutionLayerTest, Simple) {
  DeconvCase c;
  c.bottom_shape = {2, 3, 3, 4};
  c.kernel = {3};
  c.num_output = 4;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(DeconvolutionLayerTest, StrideTwoPadOne) {
  DeconvCase c;
  c.bottom_shape = {2, 3, 3, 3};
  c.kernel = {3};
  c.stride = {2};
  c.pad = {1};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(DeconvolutionLayerTest, DilationAndRectangularKernel) {
  DeconvCase c;
  c.bottom_shape = {2, 2, 3, 4};
  c.kernel = {2, 3};
  c.stride = {2, 1};
  c.pad = {0, 1};
  c.dilation = {2, 1};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(DeconvolutionLayerTest, GroupTwo) {
  DeconvCase c;
  c.bottom_shape = {2, 4, 3, 3};
  c.kernel = {2};
  c.stride = {2};
  c.group = 2;
  c.num_output = 6;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(DeconvolutionLayerTest, NoBias) {
  DeconvCase c;
  c.bottom_shape = {2, 3, 3, 3};
  c.kernel = {2};
  c.bias = false;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(DeconvolutionLayerTest, ThreeSpatialAxes) {
  DeconvCase c;
  c.bottom_shape = {2, 2, 2, 3, 2};
  c.kernel = {2, 3, 2};
  c.stride = {2, 1, 2};
  c.pad = {0, 1, 1};
  c.num_output = 3;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(DeconvolutionLayerTest, OneByOneKernel) {
  DeconvCase c;
  c.bottom_shape = {2, 3, 3, 4};
  c.kernel = {1};
  c.num_output = 4;
  this->CheckAgainstDirect(c);
  c.bottom_shape = {1, 3, 3, 4};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(DeconvolutionLayerTest, SeveralBottomsAndOneImage) {
  DeconvCase c;
  c.bottom_shape = {1, 3, 3, 3};
  c.kernel = {3};
  c.stride = {2};
  c.num_bottoms = 2;
  this->CheckAgainstDirect(c);
}

// A Deconvolution is the adjoint of the Convolution with the same weights:
// <conv(x), y> = <x, deconv(y)>.
TYPED_TEST(DeconvolutionLayerTest, AdjointOfConvolution) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  DeconvCase conv_case;
  conv_case.bottom_shape = {2, 4, 5, 5};
  conv_case.kernel = {3};
  conv_case.stride = {2};
  conv_case.pad = {1};
  conv_case.group = 2;
  conv_case.num_output = 6;
  conv_case.bias = false;
  Blob<Dtype> x(conv_case.bottom_shape), conv_x, y, deconv_y;
  this->Fill(&x);
  std::vector<Blob<Dtype>*> x_vec{&x}, conv_x_vec{&conv_x};
  ConvolutionLayer<Dtype> conv(ParamFor(conv_case, "Convolution"));
  conv.SetUp(x_vec, conv_x_vec);
  conv.Forward(x_vec, conv_x_vec);

  DeconvCase deconv_case = conv_case;
  deconv_case.bottom_shape = conv_x.shape();
  deconv_case.num_output = conv_case.bottom_shape[1];
  y.Reshape(conv_x.shape());
  this->Fill(&y);
  std::vector<Blob<Dtype>*> y_vec{&y}, deconv_y_vec{&deconv_y};
  DeconvolutionLayer<Dtype> deconv(ParamFor(deconv_case));
  deconv.SetUp(y_vec, deconv_y_vec);
  ASSERT_EQ(deconv.blobs()[0]->shape(), conv.blobs()[0]->shape());
  deconv.blobs()[0]->CopyFrom(*conv.blobs()[0]);
  deconv.Forward(y_vec, deconv_y_vec);
  ASSERT_EQ(deconv_y.shape(), x.shape());

  double conv_x_dot_y = 0, x_dot_deconv_y = 0;
  for (int i = 0; i < y.count(); ++i)
    conv_x_dot_y += double(conv_x.cpu_data()[i]) * y.cpu_data()[i];
  for (int i = 0; i < x.count(); ++i) {
    x_dot_deconv_y += double(x.cpu_data()[i]) * deconv_y.cpu_data()[i];
  }
  EXPECT_NEAR(conv_x_dot_y, x_dot_deconv_y, 1e-4 * std::max(1.0, std::fabs(conv_x_dot_y)));
  EXPECT_GT(std::fabs(conv_x_dot_y), 1e-2);  // not trivially zero
}

TYPED_TEST(DeconvolutionLayerTest, Gradient) {
  DeconvCase c;
  c.bottom_shape = {2, 3, 3, 3};
  c.kernel = {3};
  c.stride = {2};
  c.pad = {1};
  this->CheckGradient(c);
}

TYPED_TEST(DeconvolutionLayerTest, GradientGroupDilation) {
  DeconvCase c;
  c.bottom_shape = {2, 4, 2, 3};
  c.kernel = {2};
  c.dilation = {2};
  c.group = 2;
  c.num_output = 4;
  this->CheckGradient(c);
}

TYPED_TEST(DeconvolutionLayerTest, Gradient3DNoBias) {
  DeconvCase c;
  c.bottom_shape = {2, 2, 2, 3, 2};
  c.kernel = {2};
  c.stride = {2, 1, 1};
  c.bias = false;
  this->CheckGradient(c);
}

TYPED_TEST(DeconvolutionLayerTest, BadConfigurationsThrow) {
  using Dtype = typename TypeParam::Dtype;
  DeconvCase c;
  c.bottom_shape = {2, 4, 3, 3};
  c.kernel = {3};

  LayerParameter param = ParamFor(c);
  param.mutable_convolution_param()->add_pad(2);  // 1 * (3 - 1) + 3 - 2 * 2 = 1 still fits
  Blob<Dtype> bottom(c.bottom_shape), top;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  DeconvolutionLayer<Dtype> fits(param);
  fits.SetUp(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{2, 2, 1, 1}));
  param.mutable_convolution_param()->set_pad(0, 3);
  this->ExpectSetUpError(param, c.bottom_shape, "the output would have size -1");

  param = ParamFor(c);
  param.mutable_convolution_param()->clear_kernel_size();
  this->ExpectSetUpError(param, c.bottom_shape, "missing kernel_size");

  param = ParamFor(c);
  param.mutable_convolution_param()->add_stride(0);
  this->ExpectSetUpError(param, c.bottom_shape, "stride must be positive");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_group(3);
  param.mutable_convolution_param()->set_num_output(6);
  this->ExpectSetUpError(param, c.bottom_shape, "must divide the 4 input channels");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_group(4);
  this->ExpectSetUpError(param, c.bottom_shape, "must divide num_output 2");

  // Deconvolution weights are [channels, num_output / group, kernel...].
  param = ParamFor(c);
  Blob<Dtype>(std::vector<int>{2, 4, 3, 3}).ToProto(param.add_blobs());
  Blob<Dtype>(std::vector<int>{2}).ToProto(param.add_blobs());
  this->ExpectSetUpError(param, c.bottom_shape, "expected 4 2 3 3 (72)");
}

TYPED_TEST(DeconvolutionLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Deconvolution");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Deconvolution");
}

}  // namespace
}  // namespace crema
