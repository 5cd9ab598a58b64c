// Convolution: a 2-D forward by hand; forward and backward against a direct
// (loop-over-every-product) convolution written here, for strides, padding,
// dilation, groups, rectangular and 1x1 kernels, N-D inputs, several bottoms
// and batches split into chunks; numerical gradients; the parameter-diff
// accumulation convention; and the configuration errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/conv_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// A convolution to test: the bottom's shape and the parameters, one value per
// spatial axis.
struct ConvCase {
  std::vector<int> bottom_shape;
  std::vector<int> kernel, stride, pad, dilation;
  int num_output = 2;
  int group = 1;
  bool bias = true;
  bool force_nd = false;
  // Writes kernel_h/kernel_w, stride_h/... instead of the repeated fields.
  bool hw_fields = false;
  int axis = 1;
  int num_bottoms = 1;
};

LayerParameter ParamFor(const ConvCase& c) {
  LayerParameter param;
  param.set_name("conv");
  param.set_type("Convolution");
  ConvolutionParameter* conv = param.mutable_convolution_param();
  conv->set_num_output(c.num_output);
  conv->set_group(c.group);
  conv->set_bias_term(c.bias);
  conv->set_force_nd_im2col(c.force_nd);
  conv->set_axis(c.axis);
  if (c.hw_fields) {
    conv->set_kernel_h(c.kernel[0]);
    conv->set_kernel_w(c.kernel[1]);
    conv->set_stride_h(c.stride[0]);
    conv->set_stride_w(c.stride[1]);
    conv->set_pad_h(c.pad[0]);
    conv->set_pad_w(c.pad[1]);
  } else {
    for (int k : c.kernel) conv->add_kernel_size(k);
    for (int s : c.stride) conv->add_stride(s);
    for (int p : c.pad) conv->add_pad(p);
  }
  for (int d : c.dilation) conv->add_dilation(d);
  conv->mutable_weight_filler()->set_type("gaussian");
  conv->mutable_bias_filler()->set_type("gaussian");
  return param;
}

// The geometry of a direct convolution: images (the axes before the channel
// axis flattened), input channels and spatial shape, and the per-axis values.
struct DirectConvolution {
  int images, channels, num_output, group;
  std::vector<int> in_spatial, out_spatial, kernel, stride, pad, dilation;

  explicit DirectConvolution(const ConvCase& c) : num_output(c.num_output), group(c.group) {
    const int spatial_axes = static_cast<int>(c.bottom_shape.size()) - c.axis - 1;
    images = 1;
    for (int axis = 0; axis < c.axis; ++axis) images *= c.bottom_shape[axis];
    channels = c.bottom_shape[c.axis];
    in_spatial.assign(c.bottom_shape.begin() + c.axis + 1, c.bottom_shape.end());
    kernel = PerAxis(c.kernel, spatial_axes, 0);
    stride = PerAxis(c.stride, spatial_axes, 1);
    pad = PerAxis(c.pad, spatial_axes, 0);
    dilation = PerAxis(c.dilation, spatial_axes, 1);
    for (int axis = 0; axis < spatial_axes; ++axis) {
      const int extent = dilation[axis] * (kernel[axis] - 1) + 1;
      out_spatial.push_back((in_spatial[axis] + 2 * pad[axis] - extent) / stride[axis] + 1);
    }
  }

  // Calls visit(input index, weight index, output index, output channel) for
  // every product the convolution sums.
  template <typename Visit>
  void ForEachProduct(Visit visit) const {
    const int in_size = Product(in_spatial);
    const int out_size = Product(out_spatial);
    const int kernel_size = Product(kernel);
    const int channels_per_group = channels / group;
    const int outputs_per_group = num_output / group;
    const auto out_positions = AllIndices(out_spatial);
    const auto taps = AllIndices(kernel);
    for (int n = 0; n < images; ++n) {
      for (int o = 0; o < num_output; ++o) {
        for (int p = 0; p < out_size; ++p) {
          for (int c = 0; c < channels_per_group; ++c) {
            const int input_channel = (o / outputs_per_group) * channels_per_group + c;
            for (int t = 0; t < kernel_size; ++t) {
              int in_offset = 0;
              bool inside = true;
              for (size_t axis = 0; axis < kernel.size(); ++axis) {
                const int pos = out_positions[p][axis] * stride[axis] - pad[axis] +
                                taps[t][axis] * dilation[axis];
                inside = inside && pos >= 0 && pos < in_spatial[axis];
                in_offset = in_offset * in_spatial[axis] + pos;
              }
              if (!inside) continue;
              visit((n * channels + input_channel) * in_size + in_offset,
                    (o * channels_per_group + c) * kernel_size + t,
                    (n * num_output + o) * out_size + p, o);
            }
          }
        }
      }
    }
  }
};

template <typename TypeParam>
class ConvolutionLayerTest : public MultiDeviceTest<TypeParam> {
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

  // Runs the layer forward and backward on random data and compares the top,
  // the bottom diffs and the parameter diffs with the direct convolution.
  void CheckAgainstDirect(const ConvCase& c) {
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
    ConvolutionLayer<Dtype> layer(ParamFor(c));
    layer.SetUp(bottom_vec, top_vec);
    ASSERT_EQ(layer.blobs().size(), c.bias ? 2u : 1u);
    const DirectConvolution direct(c);
    std::vector<int> top_shape(c.bottom_shape.begin(), c.bottom_shape.begin() + c.axis);
    top_shape.push_back(c.num_output);
    top_shape.insert(top_shape.end(), direct.out_spatial.begin(), direct.out_spatial.end());
    const Dtype* weights = layer.blobs()[0]->cpu_data();

    layer.Forward(bottom_vec, top_vec);
    for (int b = 0; b < c.num_bottoms; ++b) {
      ASSERT_EQ(tops[b]->shape(), top_shape);
      std::vector<double> expected(tops[b]->count(), 0.0);
      const int out_size = Product(direct.out_spatial);
      if (c.bias) {
        for (size_t i = 0; i < expected.size(); ++i) {
          expected[i] = layer.blobs()[1]->cpu_data()[(i / out_size) % c.num_output];
        }
      }
      const Dtype* input = bottoms[b]->cpu_data();
      direct.ForEachProduct(
          [&](int in, int w, int out, int) { expected[out] += double(weights[w]) * input[in]; });
      ExpectClose(tops[b]->cpu_data(), expected, "top " + std::to_string(b));
    }

    for (auto& param : layer.blobs()) {
      cpu_set(param->count(), Dtype(0), param->mutable_cpu_diff());
    }
    std::vector<double> weight_diff(layer.blobs()[0]->count(), 0.0);
    std::vector<double> bias_diff(c.num_output, 0.0);
    for (int b = 0; b < c.num_bottoms; ++b) {
      FillerParameter filler;
      filler.set_type("gaussian");
      Blob<Dtype> top_diff(tops[b]->shape());
      GetFiller<Dtype>(filler)->Fill(&top_diff);
      std::copy(top_diff.cpu_data(), top_diff.cpu_data() + top_diff.count(),
                tops[b]->mutable_cpu_diff());
    }
    layer.Backward(top_vec, std::vector<bool>(c.num_bottoms, true), bottom_vec);
    for (int b = 0; b < c.num_bottoms; ++b) {
      std::vector<double> bottom_diff(bottoms[b]->count(), 0.0);
      const Dtype* input = bottoms[b]->cpu_data();
      const Dtype* top_diff = tops[b]->cpu_diff();
      direct.ForEachProduct([&](int in, int w, int out, int) {
        bottom_diff[in] += double(weights[w]) * top_diff[out];
        weight_diff[w] += double(input[in]) * top_diff[out];
      });
      const int out_size = Product(direct.out_spatial);
      for (int i = 0; i < tops[b]->count(); ++i) {
        bias_diff[(i / out_size) % c.num_output] += top_diff[i];
      }
      ExpectClose(bottoms[b]->cpu_diff(), bottom_diff, "bottom diff " + std::to_string(b));
    }
    ExpectClose(layer.blobs()[0]->cpu_diff(), weight_diff, "weight diff");
    if (c.bias) ExpectClose(layer.blobs()[1]->cpu_diff(), bias_diff, "bias diff");
  }

  void CheckGradient(const ConvCase& c) {
    Context::set_random_seed(1701);
    Blob<Dtype> bottom(c.bottom_shape), top;
    Fill(&bottom);
    std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
    ConvolutionLayer<Dtype> layer(ParamFor(c));
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradient(&layer, bottom_vec, top_vec);
  }

  // SetUp must throw an Error that names the layer, its type and `phrase`.
  void ExpectSetUpError(const LayerParameter& param, const std::vector<std::vector<int>>& shapes,
                        const std::string& phrase) {
    std::vector<std::unique_ptr<Blob<Dtype>>> blobs;
    std::vector<Blob<Dtype>*> bottom_vec, top_vec;
    for (const auto& shape : shapes) {
      blobs.emplace_back(new Blob<Dtype>(shape));
      bottom_vec.push_back(blobs.back().get());
      blobs.emplace_back(new Blob<Dtype>());
      top_vec.push_back(blobs.back().get());
    }
    ConvolutionLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom_vec, top_vec);
      FAIL() << "expected an Error mentioning '" << phrase << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("'" + param.name() + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("Convolution"), std::string::npos) << message;
      EXPECT_NE(message.find(phrase), std::string::npos) << message;
    }
  }
};
TYPED_TEST_SUITE(ConvolutionLayerTest, TestDtypesAndDevices);

TYPED_TEST(ConvolutionLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(1, 1, 3, 3), top;
  for (int i = 0; i < 9; ++i) bottom.mutable_cpu_data()[i] = i + 1;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  ConvCase c;
  c.bottom_shape = {1, 1, 3, 3};
  c.kernel = {2};
  c.num_output = 1;
  ConvolutionLayer<Dtype> layer(ParamFor(c));
  layer.SetUp(bottom_vec, top_vec);
  ASSERT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{1, 1, 2, 2}));
  ASSERT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{1}));
  const Dtype weights[] = {1, 2, 3, 4};
  std::copy(weights, weights + 4, layer.blobs()[0]->mutable_cpu_data());
  layer.blobs()[1]->mutable_cpu_data()[0] = 0.5;
  layer.Forward(bottom_vec, top_vec);
  ASSERT_EQ(top.shape(), (std::vector<int>{1, 1, 2, 2}));
  // Input 1..9 row by row; each output is 1*a + 2*b + 3*c + 4*d of its 2x2 window.
  const Dtype expected[] = {37.5, 47.5, 67.5, 77.5};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(ConvolutionLayerTest, StrideTwoPadOne) {
  ConvCase c;
  c.bottom_shape = {2, 3, 6, 5};
  c.kernel = {3};
  c.stride = {2};
  c.pad = {1};
  c.num_output = 4;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, DilationTwo) {
  ConvCase c;
  c.bottom_shape = {2, 3, 7, 6};
  c.kernel = {3};
  c.dilation = {2};
  c.num_output = 3;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, GroupTwo) {
  ConvCase c;
  c.bottom_shape = {2, 4, 5, 5};
  c.kernel = {3};
  c.pad = {1};
  c.group = 2;
  c.num_output = 6;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, RectangularKernelFromHeightWidthFields) {
  ConvCase c;
  c.bottom_shape = {2, 3, 6, 5};
  c.kernel = {3, 2};
  c.stride = {2, 1};
  c.pad = {0, 1};
  c.hw_fields = true;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, PerAxisRepeatedFields) {
  ConvCase c;
  c.bottom_shape = {2, 2, 7, 6};
  c.kernel = {2, 3};
  c.stride = {1, 2};
  c.pad = {2, 1};
  c.dilation = {2, 1};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, NoBias) {
  ConvCase c;
  c.bottom_shape = {2, 3, 5, 5};
  c.kernel = {3};
  c.bias = false;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, ThreeSpatialAxes) {
  ConvCase c;
  c.bottom_shape = {2, 2, 4, 5, 3};
  c.kernel = {3, 2, 2};
  c.stride = {1, 2, 1};
  c.pad = {1, 0, 1};
  c.dilation = {1, 1, 2};
  c.num_output = 3;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, TwoSpatialAxesThroughNdIm2col) {
  ConvCase c;
  c.bottom_shape = {2, 3, 6, 7};
  c.kernel = {3};
  c.stride = {2};
  c.pad = {1};
  c.dilation = {2};
  c.force_nd = true;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, OneSpatialAxis) {
  ConvCase c;
  c.bottom_shape = {2, 3, 9};
  c.kernel = {3};
  c.stride = {2};
  c.pad = {1};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, OneByOneKernel) {
  ConvCase c;
  c.bottom_shape = {2, 3, 4, 5};
  c.kernel = {1};
  c.num_output = 4;
  this->CheckAgainstDirect(c);
  c.bottom_shape = {1, 3, 4, 5};  // the layer then works in the blobs' memory
  this->CheckAgainstDirect(c);
  c.group = 2;
  c.bottom_shape = {2, 4, 3, 3};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, OneByOneKernelWithStrideIsNotSkipped) {
  ConvCase c;
  c.bottom_shape = {2, 3, 5, 5};
  c.kernel = {1};
  c.stride = {2};
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, SingleImage) {
  ConvCase c;
  c.bottom_shape = {1, 3, 5, 4};
  c.kernel = {3};
  c.pad = {1};
  c.num_output = 3;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, SeveralBottomsShareTheFilters) {
  ConvCase c;
  c.bottom_shape = {2, 3, 5, 4};
  c.kernel = {3};
  c.pad = {1};
  c.num_bottoms = 3;
  this->CheckAgainstDirect(c);
}

TYPED_TEST(ConvolutionLayerTest, ChannelAxisTwo) {
  ConvCase c;
  c.bottom_shape = {2, 2, 3, 4, 4};
  c.axis = 2;
  c.kernel = {3};
  c.pad = {1};
  this->CheckAgainstDirect(c);
}

// Images large enough that a batch of 3 takes several chunks (2 + 1 in float,
// 1 + 1 + 1 in double).
TYPED_TEST(ConvolutionLayerTest, ManyImagesSplitIntoChunks) {
  ConvCase c;
  c.bottom_shape = {3, 8, 108, 108};
  c.kernel = {3};
  c.num_output = 2;
  this->CheckAgainstDirect(c);
}

// On the CPU the batch is split into one part per thread of the budget, each
// part with its own buffers and its own parameter gradient sums: every split
// (one image per part included) gives the direct convolution's values.
TYPED_TEST(ConvolutionLayerTest, BatchSplitOverTheThreadBudget) {
  ConvCase c;
  c.bottom_shape = {5, 3, 9, 9};
  c.kernel = {3};
  c.stride = {2};
  c.pad = {1};
  c.num_output = 4;
  c.num_bottoms = 2;
  for (int budget : {1, 2, 3, 5, 8}) {
    SCOPED_TRACE("thread budget " + std::to_string(budget));
    ScopedThreadBudget scoped(budget);
    this->CheckAgainstDirect(c);
  }
}

TYPED_TEST(ConvolutionLayerTest, Gradient) {
  ConvCase c;
  c.bottom_shape = {2, 3, 5, 5};
  c.kernel = {3};
  c.stride = {2};
  c.pad = {1};
  this->CheckGradient(c);
}

TYPED_TEST(ConvolutionLayerTest, GradientGroup) {
  ConvCase c;
  c.bottom_shape = {2, 4, 4, 4};
  c.kernel = {2};
  c.group = 2;
  c.num_output = 4;
  this->CheckGradient(c);
}

TYPED_TEST(ConvolutionLayerTest, GradientDilation) {
  ConvCase c;
  c.bottom_shape = {2, 2, 5, 5};
  c.kernel = {2};
  c.dilation = {2};
  c.pad = {1};
  this->CheckGradient(c);
}

TYPED_TEST(ConvolutionLayerTest, Gradient3D) {
  ConvCase c;
  c.bottom_shape = {2, 2, 3, 4, 3};
  c.kernel = {2};
  c.stride = {1, 2, 1};
  c.pad = {1, 0, 0};
  this->CheckGradient(c);
}

TYPED_TEST(ConvolutionLayerTest, GradientNoBias) {
  ConvCase c;
  c.bottom_shape = {2, 3, 4, 4};
  c.kernel = {3};
  c.bias = false;
  this->CheckGradient(c);
}

TYPED_TEST(ConvolutionLayerTest, GradientOneByOne) {
  ConvCase c;
  c.bottom_shape = {2, 3, 3, 4};
  c.kernel = {1};
  c.num_output = 3;
  this->CheckGradient(c);
}

// Parameter diffs accumulate over Backward calls (the solver zeroes them);
// bottom diffs are overwritten; nothing is written that was not asked for.
TYPED_TEST(ConvolutionLayerTest, BackwardAddsToParameterDiffsOnly) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  ConvCase c;
  c.bottom_shape = {2, 3, 4, 4};
  c.kernel = {3};
  c.pad = {1};
  Blob<Dtype> bottom(c.bottom_shape), top;
  this->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  ConvolutionLayer<Dtype> layer(ParamFor(c));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  Blob<Dtype> top_diff(top.shape());
  this->Fill(&top_diff);
  std::copy(top_diff.cpu_data(), top_diff.cpu_data() + top.count(), top.mutable_cpu_diff());
  for (auto& param : layer.blobs()) cpu_set(param->count(), Dtype(0), param->mutable_cpu_diff());

  layer.Backward(top_vec, {true}, bottom_vec);
  Blob<Dtype> weight_once, bias_once, bottom_once;
  weight_once.CopyFrom(*layer.blobs()[0], true, true);
  bias_once.CopyFrom(*layer.blobs()[1], true, true);
  bottom_once.CopyFrom(bottom, true, true);
  layer.Backward(top_vec, {true}, bottom_vec);
  for (int i = 0; i < weight_once.count(); ++i) {
    EXPECT_NEAR(layer.blobs()[0]->cpu_diff()[i], 2 * weight_once.cpu_diff()[i], 1e-4) << i;
  }
  for (int i = 0; i < bias_once.count(); ++i) {
    EXPECT_NEAR(layer.blobs()[1]->cpu_diff()[i], 2 * bias_once.cpu_diff()[i], 1e-4) << i;
  }
  for (int i = 0; i < bottom.count(); ++i) {
    EXPECT_EQ(bottom.cpu_diff()[i], bottom_once.cpu_diff()[i]) << i;
  }

  // No gradient asked for anywhere: every diff stays as it was.
  cpu_set(bottom.count(), Dtype(7), bottom.mutable_cpu_diff());
  layer.set_param_propagate_down(0, false);
  layer.set_param_propagate_down(1, false);
  weight_once.CopyFrom(*layer.blobs()[0], true, true);
  layer.Backward(top_vec, {false}, bottom_vec);
  for (int i = 0; i < bottom.count(); ++i) EXPECT_EQ(bottom.cpu_diff()[i], Dtype(7)) << i;
  for (int i = 0; i < weight_once.count(); ++i) {
    EXPECT_EQ(layer.blobs()[0]->cpu_diff()[i], weight_once.cpu_diff()[i]) << i;
  }
}

TYPED_TEST(ConvolutionLayerTest, ReshapeFollowsTheBottom) {
  using Dtype = typename TypeParam::Dtype;
  ConvCase c;
  c.bottom_shape = {2, 3, 5, 5};
  c.kernel = {3};
  Blob<Dtype> bottom(c.bottom_shape), top;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  ConvolutionLayer<Dtype> layer(ParamFor(c));
  layer.SetUp(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{2, 2, 3, 3}));
  bottom.Reshape(std::vector<int>{4, 3, 7, 6});
  layer.Reshape(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{4, 2, 5, 4}));
}

TYPED_TEST(ConvolutionLayerTest, BadConfigurationsThrow) {
  using Dtype = typename TypeParam::Dtype;
  ConvCase c;
  c.bottom_shape = {2, 4, 5, 5};
  c.kernel = {3};
  const std::vector<std::vector<int>> bottom{c.bottom_shape};

  LayerParameter param = ParamFor(c);
  param.mutable_convolution_param()->clear_kernel_size();
  this->ExpectSetUpError(param, bottom, "missing kernel_size");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_kernel_size(0, 0);
  this->ExpectSetUpError(param, bottom, "kernel_size must be positive");

  param = ParamFor(c);
  param.mutable_convolution_param()->add_stride(0);
  this->ExpectSetUpError(param, bottom, "stride must be positive");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_kernel_h(3);
  param.mutable_convolution_param()->set_kernel_w(3);
  this->ExpectSetUpError(param, bottom, "not both");

  param = ParamFor(c);
  param.mutable_convolution_param()->add_kernel_size(3);
  param.mutable_convolution_param()->add_kernel_size(3);
  this->ExpectSetUpError(param, bottom, "kernel_size has 3 values");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_group(3);
  this->ExpectSetUpError(param, bottom, "must divide the 4 input channels");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_group(4);
  param.mutable_convolution_param()->set_num_output(6);
  this->ExpectSetUpError(param, bottom, "must divide num_output 6");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_num_output(0);
  this->ExpectSetUpError(param, bottom, "num_output must be positive");

  param = ParamFor(c);
  param.mutable_convolution_param()->set_kernel_size(0, 6);
  this->ExpectSetUpError(param, bottom, "larger than the padded input");
  param.mutable_convolution_param()->add_pad(1);  // 5 + 2 * 1 fits a 6x6 kernel
  ConvolutionLayer<Dtype> fits(param);
  Blob<Dtype> input(c.bottom_shape), output;
  std::vector<Blob<Dtype>*> input_vec{&input}, output_vec{&output};
  fits.SetUp(input_vec, output_vec);
  EXPECT_EQ(output.shape(), (std::vector<int>{2, 2, 2, 2}));

  param = ParamFor(c);
  param.mutable_convolution_param()->set_axis(4);
  this->ExpectSetUpError(param, bottom, "axis 4 is out of range");

  param = ParamFor(c);
  param.mutable_convolution_param()->clear_kernel_size();
  param.mutable_convolution_param()->set_kernel_h(3);
  param.mutable_convolution_param()->set_kernel_w(3);
  this->ExpectSetUpError(param, {{2, 4, 5, 5, 5}}, "kernel_h/kernel_w need 2 spatial axes");
}

TYPED_TEST(ConvolutionLayerTest, BottomsOfDifferentShapesThrow) {
  ConvCase c;
  c.bottom_shape = {2, 3, 5, 5};
  c.kernel = {3};
  this->ExpectSetUpError(ParamFor(c), {{2, 3, 5, 5}, {2, 3, 5, 4}}, "same shape");
}

TYPED_TEST(ConvolutionLayerTest, TrainedWeightsOfTheWrongShapeThrow) {
  using Dtype = typename TypeParam::Dtype;
  ConvCase c;
  c.bottom_shape = {2, 3, 5, 5};
  c.kernel = {3};
  c.num_output = 4;
  LayerParameter param = ParamFor(c);
  Blob<Dtype>(std::vector<int>{4, 3, 5, 5}).ToProto(param.add_blobs());
  Blob<Dtype>(std::vector<int>{4}).ToProto(param.add_blobs());
  this->ExpectSetUpError(param, {c.bottom_shape},
                         "weight blob has shape 4 3 5 5 (300), expected 4 3 3 3 (108)");

  param.clear_blobs();
  Blob<Dtype>(std::vector<int>{4, 3, 3, 3}).ToProto(param.add_blobs());
  this->ExpectSetUpError(param, {c.bottom_shape}, "1 learnable blobs, expected 2");

  param.clear_blobs();
  Blob<Dtype> weights(std::vector<int>{4, 3, 3, 3}), bias(std::vector<int>{4});
  cpu_set(weights.count(), Dtype(0.25), weights.mutable_cpu_data());
  cpu_set(bias.count(), Dtype(-1), bias.mutable_cpu_data());
  weights.ToProto(param.add_blobs());
  bias.ToProto(param.add_blobs());
  ConvolutionLayer<Dtype> layer(param);
  Blob<Dtype> bottom(c.bottom_shape), top;
  cpu_set(bottom.count(), Dtype(1), bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  // The trained values are kept: 27 inputs of 1 times 0.25, minus 1.
  for (int i = 0; i < top.count(); ++i) EXPECT_NEAR(top.cpu_data()[i], 5.75, 1e-5) << i;
}

TYPED_TEST(ConvolutionLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Convolution");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Convolution");
}

}  // namespace
}  // namespace crema
