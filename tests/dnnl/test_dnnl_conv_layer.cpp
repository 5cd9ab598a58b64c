// The oneDNN convolution against the reference one: the same forward values,
// bottom gradients and (accumulated) parameter gradients, over strides, pads,
// dilation, groups (depthwise ones too, and the forks' depthwise types), no
// bias and two bottoms; shapes oneDNN does not take fall back to the
// reference body.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_conv_layer.hpp"
#include "crema/layer_factory.hpp"
#include "crema/layers/conv_layer.hpp"
#include "crema/layers/depthwise_conv_layer.hpp"
#include "crema/util/io.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// Runs the reference and the oneDNN layer on the same bottoms and weights and
// compares everything they produce.
void ExpectSameAsReference(const std::string& conv_param, std::vector<int> bottom_shape,
                           int bottoms = 1, bool expect_dnnl = true) {
  SCOPED_TRACE(conv_param);
  LayerParameter param;
  ReadProtoFromString("name: 'conv' type: 'Convolution' convolution_param { " + conv_param +
                          " weight_filler { type: 'gaussian' std: 0.3 }"
                          " bias_filler { type: 'gaussian' std: 0.3 } }",
                      "layer", &param);
  Context::set_random_seed(5);
  std::vector<std::unique_ptr<Blob<float>>> data;
  std::vector<Blob<float>*> bottom, ref_top, dnnl_top;
  for (int i = 0; i < bottoms; ++i) {
    data.emplace_back(new Blob<float>(bottom_shape));
    GaussianFill(data.back().get(), 1.0f);
    bottom.push_back(data.back().get());
    data.emplace_back(new Blob<float>());
    ref_top.push_back(data.back().get());
    data.emplace_back(new Blob<float>());
    dnnl_top.push_back(data.back().get());
  }
  ConvolutionLayer<float> reference(param);
  DnnlConvolutionLayer<float> dnnl(WithEngine(param, Engine::kDnnl));
  reference.SetUp(bottom, ref_top);
  dnnl.SetUp(bottom, dnnl_top);
  EXPECT_EQ(dnnl.uses_dnnl(), expect_dnnl);
  ASSERT_EQ(reference.blobs().size(), dnnl.blobs().size());
  for (size_t b = 0; b < reference.blobs().size(); ++b) {
    // Parameter gradients accumulate: start both from the same non-zero diff.
    float* diff = reference.blobs()[b]->mutable_cpu_diff();
    for (int k = 0; k < reference.blobs()[b]->count(); ++k) diff[k] = 0.01f * (k % 7);
    dnnl.blobs()[b]->CopyFrom(*reference.blobs()[b]);
    dnnl.blobs()[b]->CopyFrom(*reference.blobs()[b], true);
  }
  reference.Forward(bottom, ref_top);
  dnnl.Forward(bottom, dnnl_top);
  for (int i = 0; i < bottoms; ++i) {
    ASSERT_EQ(ref_top[i]->shape(), dnnl_top[i]->shape());
    EXPECT_LT(MaxDifference(ref_top[i]->cpu_data(), dnnl_top[i]->cpu_data(), ref_top[i]->count()),
              1e-4f);
    GaussianFill(ref_top[i], 1.0f);  // top gradient (stored in data, copied to both diffs)
    std::copy(ref_top[i]->cpu_data(), ref_top[i]->cpu_data() + ref_top[i]->count(),
              ref_top[i]->mutable_cpu_diff());
    std::copy(ref_top[i]->cpu_diff(), ref_top[i]->cpu_diff() + ref_top[i]->count(),
              dnnl_top[i]->mutable_cpu_diff());
  }
  const std::vector<bool> propagate(bottoms, true);
  std::vector<std::vector<float>> ref_bottom_diff;
  reference.Backward(ref_top, propagate, bottom);
  for (Blob<float>* blob : bottom) {
    ref_bottom_diff.emplace_back(blob->cpu_diff(), blob->cpu_diff() + blob->count());
  }
  dnnl.Backward(dnnl_top, propagate, bottom);
  for (int i = 0; i < bottoms; ++i) {
    EXPECT_LT(MaxDifference(ref_bottom_diff[i].data(), bottom[i]->cpu_diff(), bottom[i]->count()),
              1e-4f)
        << "bottom " << i;
  }
  for (size_t b = 0; b < reference.blobs().size(); ++b) {
    EXPECT_LT(MaxDifference(reference.blobs()[b]->cpu_diff(), dnnl.blobs()[b]->cpu_diff(),
                            reference.blobs()[b]->count()),
              1e-3f)
        << "parameter " << b;
  }
}

TEST(DnnlConvolutionLayerTest, MatchesReferencePlain) {
  ExpectSameAsReference("num_output: 4 kernel_size: 3", {2, 3, 7, 6});
}

TEST(DnnlConvolutionLayerTest, MatchesReferenceStridePad) {
  ExpectSameAsReference("num_output: 5 kernel_size: 3 stride: 2 pad: 1", {2, 2, 9, 8});
}

TEST(DnnlConvolutionLayerTest, MatchesReferenceRectangularAndFloorOutput) {
  // (8 + 2*1 - 4) / 3 + 1 = 3: oneDNN needs a right padding below the left.
  ExpectSameAsReference(
      "num_output: 3 kernel_h: 4 kernel_w: 2 stride_h: 3 stride_w: 2 "
      "pad_h: 1 pad_w: 0",
      {2, 2, 8, 7});
}

TEST(DnnlConvolutionLayerTest, MatchesReferenceGroupsDilationNoBias) {
  ExpectSameAsReference("num_output: 4 kernel_size: 3 group: 2 dilation: 2 bias_term: false",
                        {2, 4, 9, 9});
}

TEST(DnnlConvolutionLayerTest, MatchesReferenceTwoBottoms) {
  ExpectSameAsReference("num_output: 3 kernel_size: 2", {1, 2, 5, 5}, 2);
}

// From 16 input channels per group oneDNN works in its own (blocked)
// layouts, with reorders at the layer's edges.
TEST(DnnlConvolutionLayerTest, MatchesReferenceBlockedLayouts) {
  ExpectSameAsReference("num_output: 24 kernel_size: 3 stride: 2 pad: 1", {2, 16, 7, 6});
}

TEST(DnnlConvolutionLayerTest, MatchesReferenceBlockedGroupsTwoBottoms) {
  ExpectSameAsReference("num_output: 32 kernel_size: 3 group: 2", {2, 32, 6, 5}, 2);
}

// Depthwise kernels (one input channel per group) on oneDNN's depthwise
// bodies: 16 groups to a block, strided, with a channel multiplier, with
// channels not a multiple of 16; and a grouped kernel of few channels per
// group. Forward, bottom and weight gradients as the reference's.
TEST(DnnlConvolutionLayerTest, MatchesReferenceDepthwise) {
  ExpectSameAsReference("num_output: 32 kernel_size: 3 pad: 1 group: 32", {2, 32, 7, 6});
  ExpectSameAsReference("num_output: 48 kernel_size: 3 pad: 1 stride: 2 group: 48 bias_term: false",
                        {2, 48, 9, 8});
  ExpectSameAsReference("num_output: 64 kernel_size: 3 pad: 1 group: 32", {2, 32, 6, 5});
  ExpectSameAsReference("num_output: 24 kernel_size: 5 pad: 2 group: 24", {3, 24, 6, 7});
}

TEST(DnnlConvolutionLayerTest, MatchesReferenceFewChannelsPerGroup) {
  ExpectSameAsReference("num_output: 32 kernel_size: 3 pad: 1 group: 8", {2, 32, 7, 6});
}

// Engine DEFAULT's twin runs a depthwise layer on oneDNN, to the reference's
// values, the first layer of a net (one channel per group there) too.
TEST(DnnlConvolutionLayerTest, DefaultRunsDepthwiseOnDnnl) {
  for (const auto& shape : {std::vector<int>{2, 32, 7, 6}, std::vector<int>{2, 3, 7, 6}}) {
    const std::string channels = std::to_string(shape[1]);
    DnnlCheck check("name: 'dw' type: 'Convolution' convolution_param { num_output: " + channels +
                        " kernel_size: 3 pad: 1 group: " + channels +
                        " weight_filler { type: 'gaussian' std: 0.3 }"
                        " bias_filler { type: 'gaussian' std: 0.3 } }",
                    {shape});
    LayerParameter param;
    ReadProtoFromString(check.layer, "layer", &param);
    Blob<float> bottom(shape), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlConvolutionLayer<float> by_default(param);
    by_default.SetUp(bottom_vec, top_vec);
    EXPECT_TRUE(by_default.uses_dnnl()) << channels << " channels";
    ExpectDnnlMatchesReference<ConvolutionLayer, DnnlConvolutionLayer>(check);
  }
}

// The forks' depthwise types on the oneDNN twin: the reference depthwise
// layer's values and gradients, under both type strings.
TEST(DnnlConvolutionLayerTest, ForkDepthwiseTypesMatchReference) {
  for (const std::string type : {"ConvolutionDepthwise", "DepthwiseConvolution"}) {
    DnnlCheck check("name: 'dw' type: '" + type +
                        "' convolution_param { num_output: 32 kernel_size: 3 pad: 1 stride: 2"
                        " weight_filler { type: 'gaussian' std: 0.3 }"
                        " bias_filler { type: 'gaussian' std: 0.3 } }",
                    {{2, 16, 9, 8}});
    ExpectDnnlMatchesReference<DepthwiseConvolutionLayer, DnnlDepthwiseConvolutionLayer>(check);
  }
}

// A Convolution with group = channels and the forks' two depthwise types,
// made by the registry with engine DEFAULT, run the same oneDNN body: the
// same top, to the bit, from the same weights.
TEST(DnnlConvolutionLayerTest, DepthwiseTypesGetTheSameBody) {
  Context::set_mode(Context::CPU);
  Context::set_random_seed(7);
  Blob<float> bottom(std::vector<int>{2, 32, 8, 8});
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom};
  std::vector<std::vector<float>> tops;
  std::vector<float> weights;
  for (const std::string type : {"Convolution", "ConvolutionDepthwise", "DepthwiseConvolution"}) {
    SCOPED_TRACE(type);
    LayerParameter param;
    ReadProtoFromString("name: 'dw' type: '" + type +
                            "' convolution_param { num_output: 32 kernel_size: 3 pad: 1 " +
                            (type == "Convolution" ? "group: 32 " : "") +
                            "weight_filler { type: 'gaussian' std: 0.3 } }",
                        "layer", &param);
    const std::shared_ptr<Layer<float>> layer = LayerRegistry<float>::CreateLayer(param);
    Blob<float> top;
    std::vector<Blob<float>*> top_vec{&top};
    layer->SetUp(bottom_vec, top_vec);
    const auto* convolution = dynamic_cast<DnnlConvolutionLayer<float>*>(layer.get());
    const auto* depthwise = dynamic_cast<DnnlDepthwiseConvolutionLayer<float>*>(layer.get());
    ASSERT_TRUE(convolution || depthwise);
    EXPECT_TRUE(convolution ? convolution->uses_dnnl() : depthwise->uses_dnnl());
    EXPECT_EQ(layer->type(), type);
    Blob<float>& layer_weights = *layer->blobs()[0];
    if (weights.empty()) weights.assign(layer_weights.cpu_data(), layer_weights.cpu_data() + 288);
    ASSERT_EQ(layer_weights.count(), 288);
    std::copy(weights.begin(), weights.end(), layer_weights.mutable_cpu_data());
    layer->Forward(bottom_vec, top_vec);
    tops.emplace_back(top.cpu_data(), top.cpu_data() + top.count());
  }
  EXPECT_TRUE(tops[0] == tops[1]);
  EXPECT_TRUE(tops[0] == tops[2]);
}

// The same inputs through two layers give the same bits: the work split
// oneDNN plans depends on the thread budget only.
TEST(DnnlConvolutionLayerTest, TwoRunsAreBitwiseIdentical) {
  LayerParameter param;
  ReadProtoFromString(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 32 kernel_size: 5 "
      "pad: 2 weight_filler { type: 'gaussian' std: 0.1 } }",
      "layer", &param);
  std::vector<std::vector<float>> runs;
  for (int run = 0; run < 2; ++run) {
    Context::set_random_seed(7);
    Blob<float> bottom(std::vector<int>{8, 32, 12, 12}), top;
    GaussianFill(&bottom, 1.0f);
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlConvolutionLayer<float> layer(WithEngine(param, Engine::kDnnl));
    layer.SetUp(bottom_vec, top_vec);
    layer.Forward(bottom_vec, top_vec);
    std::copy_n(top.cpu_data(), top.count(), top.mutable_cpu_diff());
    layer.Backward(top_vec, {true}, bottom_vec);
    std::vector<float> out(top.cpu_data(), top.cpu_data() + top.count());
    out.insert(out.end(), bottom.cpu_diff(), bottom.cpu_diff() + bottom.count());
    const Blob<float>& weights = *layer.blobs()[0];
    out.insert(out.end(), weights.cpu_diff(), weights.cpu_diff() + weights.count());
    runs.push_back(out);
  }
  EXPECT_TRUE(runs[0] == runs[1]);
}

// What engine DEFAULT runs per shape (channels per group, pointwise kernels).
TEST(DnnlConvolutionLayerTest, DefaultEngineChoosesPerShape) {
  using Body = DefaultConvolutionBody;
  EXPECT_EQ(DefaultConvolution(1, 32, 32, false, false), Body::kDnnl);
  EXPECT_EQ(DefaultConvolution(1, 512, 24, false, false), Body::kDnnl);
  EXPECT_EQ(DefaultConvolution(1, 20, 50, false, false), Body::kReference);
  EXPECT_EQ(DefaultConvolution(1, 3, 64, false, false), Body::kDnnlButBottomGradient);
  EXPECT_EQ(DefaultConvolution(1, 1, 20, false, false), Body::kReference);
  EXPECT_EQ(DefaultConvolution(1, 192, 64, true, false), Body::kReference);
  // In bf16 oneDNN runs wherever float would not keep its choice: pointwise too.
  EXPECT_EQ(DefaultConvolution(1, 192, 64, true, true), Body::kDnnl);
  EXPECT_EQ(DefaultConvolution(1, 20, 50, false, true), Body::kReference);
  EXPECT_EQ(DefaultConvolution(1, 3, 64, false, true), Body::kDnnlButBottomGradient);
  // Depthwise kernels (groups of one input and one output channel) run
  // oneDNN, float and bf16, whatever the channels; a channel multiplier
  // above 1 follows the per-group rule.
  EXPECT_EQ(DefaultConvolution(32, 1, 1, false, false), Body::kDnnl);
  EXPECT_EQ(DefaultConvolution(1024, 1, 1, false, false), Body::kDnnl);
  EXPECT_EQ(DefaultConvolution(3, 1, 1, false, false), Body::kDnnl);
  EXPECT_EQ(DefaultConvolution(32, 1, 1, false, true), Body::kDnnl);
  EXPECT_EQ(DefaultConvolution(24, 1, 2, false, false), Body::kReference);
  for (const int channels : {20, 32}) {
    LayerParameter param;
    ReadProtoFromString("name: 'conv' type: 'Convolution' convolution_param { num_output: " +
                            std::to_string(channels + 30) + " kernel_size: 3 }",
                        "layer", &param);
    Blob<float> bottom(std::vector<int>{2, channels, 6, 6}), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlConvolutionLayer<float> by_default(param), always(WithEngine(param, Engine::kDnnl));
    by_default.SetUp(bottom_vec, top_vec);
    always.SetUp(bottom_vec, top_vec);
    EXPECT_EQ(by_default.uses_dnnl(), channels == 32) << channels;
    EXPECT_TRUE(always.uses_dnnl()) << channels;
  }
  // A pointwise layer runs the reference body; the same with padding does not.
  for (const int pad : {0, 1}) {
    LayerParameter param;
    ReadProtoFromString(
        "name: 'conv' type: 'Convolution' convolution_param { num_output: 64 "
        "kernel_size: 1 pad: " +
            std::to_string(pad) + " }",
        "layer", &param);
    Blob<float> bottom(std::vector<int>{2, 32, 6, 6}), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlConvolutionLayer<float> by_default(param);
    by_default.SetUp(bottom_vec, top_vec);
    EXPECT_EQ(by_default.uses_dnnl(), pad == 1) << "pad " << pad;
  }
}

// A first layer under engine DEFAULT: oneDNN's forward and weight gradient,
// the reference body for a pass that needs the bottom gradient; both match
// the reference layer.
TEST(DnnlConvolutionLayerTest, DefaultFirstLayerMatchesReferenceWithAndWithoutBottomGradient) {
  LayerParameter param;
  ReadProtoFromString(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 24 kernel_size: 5 "
      "pad: 2 weight_filler { type: 'gaussian' std: 0.3 } "
      "bias_filler { type: 'gaussian' std: 0.3 } }",
      "layer", &param);
  for (const bool bottom_gradient : {false, true}) {
    SCOPED_TRACE(bottom_gradient ? "with bottom gradient" : "weights only");
    Context::set_random_seed(3);
    Blob<float> bottom(std::vector<int>{4, 3, 9, 8}), ref_top, dnnl_top;
    GaussianFill(&bottom, 1.0f);
    std::vector<Blob<float>*> bottom_vec{&bottom}, ref_vec{&ref_top}, dnnl_vec{&dnnl_top};
    ConvolutionLayer<float> reference(param);
    DnnlConvolutionLayer<float> dnnl(param);
    reference.SetUp(bottom_vec, ref_vec);
    dnnl.SetUp(bottom_vec, dnnl_vec);
    ASSERT_TRUE(dnnl.uses_dnnl());
    for (size_t b = 0; b < 2; ++b) dnnl.blobs()[b]->CopyFrom(*reference.blobs()[b]);
    reference.Forward(bottom_vec, ref_vec);
    dnnl.Forward(bottom_vec, dnnl_vec);
    EXPECT_LT(MaxDifference(ref_top.cpu_data(), dnnl_top.cpu_data(), ref_top.count()), 1e-4f);
    GaussianFill(&ref_top, 1.0f);
    std::copy_n(ref_top.cpu_data(), ref_top.count(), ref_top.mutable_cpu_diff());
    std::copy_n(ref_top.cpu_data(), ref_top.count(), dnnl_top.mutable_cpu_diff());
    reference.Backward(ref_vec, {bottom_gradient}, bottom_vec);
    const std::vector<float> ref_bottom_diff(bottom.cpu_diff(), bottom.cpu_diff() + bottom.count());
    dnnl.Backward(dnnl_vec, {bottom_gradient}, bottom_vec);
    if (bottom_gradient) {
      EXPECT_LT(MaxDifference(ref_bottom_diff.data(), bottom.cpu_diff(), bottom.count()), 1e-4f);
    }
    for (size_t b = 0; b < 2; ++b) {
      EXPECT_LT(MaxDifference(reference.blobs()[b]->cpu_diff(), dnnl.blobs()[b]->cpu_diff(),
                              reference.blobs()[b]->count()),
                1e-3f)
          << "parameter " << b;
    }
  }
}

TEST(DnnlConvolutionLayerTest, ThreeDimensionalFallsBackToReference) {
  ExpectSameAsReference("num_output: 2 kernel_size: 2", {1, 2, 4, 4, 3}, 1, false);
}

TEST(DnnlConvolutionLayerTest, NumericalGradient) {
  Context::set_random_seed(1701);
  LayerParameter param;
  ReadProtoFromString(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 3 "
      "kernel_size: 3 stride: 2 pad: 1 group: 1 "
      "weight_filler { type: 'gaussian' std: 0.3 } "
      "bias_filler { type: 'gaussian' std: 0.3 } }",
      "layer", &param);
  Blob<float> bottom(std::vector<int>{2, 2, 5, 5}), top;
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlConvolutionLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-2);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

// convolution_algorithm WINOGRAD: oneDNN's Winograd F(4x4, 3x3) on 3x3
// kernels at stride 1, under both engines (DEFAULT included where it would
// have chosen the reference body: 20 -> 50 channels), against the reference
// body within the transforms' error.
TEST(DnnlConvolutionLayerTest, WinogradMatchesReferenceWithinItsError) {
  if (!DnnlHasWinograd())
    GTEST_SKIP() << "this CPU has no AVX-512: WINOGRAD layers multiply directly";
  struct Case {
    std::string conv;
    std::vector<int> bottom;
  };
  for (const Case& c :
       {Case{"num_output: 32 kernel_size: 3 pad: 1", {2, 16, 9, 10}},
        Case{"num_output: 50 kernel_size: 3", {2, 20, 8, 8}},
        Case{"num_output: 16 kernel_size: 3 pad: 1 bias_term: false", {3, 16, 7, 7}}}) {
    const std::string layer =
        "name: 'conv' type: 'Convolution' convolution_algorithm: WINOGRAD "
        "convolution_param { " +
        c.conv +
        " weight_filler { type: 'gaussian' std: 0.3 }"
        " bias_filler { type: 'gaussian' std: 0.3 } }";
    DnnlCheck check(layer, {c.bottom});
    check.tolerance = 2e-4f;  // seen: 2.4e-5 of 1 + |value| (top, gradients)
    ExpectDnnlMatchesReference<ConvolutionLayer, DnnlConvolutionLayer>(check);
    for (const bool by_default : {false, true}) {
      LayerParameter param;
      ReadProtoFromString(layer, "layer", &param);
      Blob<float> bottom(c.bottom), top;
      std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
      DnnlConvolutionLayer<float> winograd(by_default ? param : WithEngine(param, Engine::kDnnl));
      winograd.SetUp(bottom_vec, top_vec);
      EXPECT_TRUE(winograd.uses_winograd()) << c.conv << (by_default ? ", DEFAULT" : "");
    }
  }
}

TEST(DnnlConvolutionLayerTest, WinogradNumericalGradient) {
  if (!DnnlHasWinograd())
    GTEST_SKIP() << "this CPU has no AVX-512: WINOGRAD layers multiply directly";
  LayerParameter param;
  ReadProtoFromString(
      "name: 'conv' type: 'Convolution' convolution_algorithm: WINOGRAD convolution_param { "
      "num_output: 16 kernel_size: 3 pad: 1 weight_filler { type: 'gaussian' std: 0.3 } "
      "bias_filler { type: 'gaussian' std: 0.3 } }",
      "layer", &param);
  Blob<float> bottom(std::vector<int>{2, 16, 5, 5}), top;
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlConvolutionLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-2);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_winograd());
}

// Kernels Winograd does not take (5x5, stride 2, dilated, grouped) and bf16
// layers multiply directly, on oneDNN as before; so does the default DIRECT.
TEST(DnnlConvolutionLayerTest, WinogradOnlyWhereItApplies) {
  for (const std::string conv :
       {"num_output: 16 kernel_size: 5 pad: 2", "num_output: 16 kernel_size: 3 stride: 2",
        "num_output: 16 kernel_size: 3 dilation: 2", "num_output: 32 kernel_size: 3 group: 2"}) {
    LayerParameter param;
    ReadProtoFromString(
        "name: 'conv' type: 'Convolution' convolution_algorithm: WINOGRAD convolution_param { " +
            conv + " }",
        "layer", &param);
    Blob<float> bottom(std::vector<int>{2, 32, 9, 9}), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlConvolutionLayer<float> layer(WithEngine(param, Engine::kDnnl));
    layer.SetUp(bottom_vec, top_vec);
    EXPECT_TRUE(layer.uses_dnnl()) << conv;
    EXPECT_FALSE(layer.uses_winograd()) << conv;
  }
  for (const std::string extra : {"", "compute_precision: BF16 convolution_algorithm: WINOGRAD "}) {
    LayerParameter param;
    ReadProtoFromString("name: 'conv' type: 'Convolution' " + extra +
                            "convolution_param { num_output: 32 kernel_size: 3 }",
                        "layer", &param);
    Blob<float> bottom(std::vector<int>{2, 32, 9, 9}), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlConvolutionLayer<float> layer(WithEngine(param, Engine::kDnnl));
    layer.SetUp(bottom_vec, top_vec);
    EXPECT_FALSE(layer.uses_winograd()) << extra;
  }
}

// compute_precision BF16: bfloat16 operands (8 significant bits) with float
// results (plain, pointwise, strided and grouped kernels), against the float
// reference body within bf16's precision.
TEST(DnnlConvolutionLayerTest, Bf16MatchesReferenceWithinBf16Precision) {
  if (!DnnlHasBf16()) GTEST_SKIP() << "this CPU has no avx512_bf16: BF16 layers compute in float";
  for (const std::string conv : {"num_output: 4 kernel_size: 3", "num_output: 32 kernel_size: 1",
                                 "num_output: 24 kernel_size: 3 stride: 2 pad: 1 group: 2",
                                 "num_output: 16 kernel_size: 3 pad: 1 group: 16"}) {
    DnnlCheck check(
        "name: 'conv' type: 'Convolution' compute_precision: BF16 "
        "convolution_param { " +
            conv +
            " weight_filler { type: 'gaussian' std: 0.3 }"
            " bias_filler { type: 'gaussian' std: 0.3 } }",
        {{2, 16, 7, 6}});
    check.tolerance = 3e-2f;
    ExpectDnnlMatchesReference<ConvolutionLayer, DnnlConvolutionLayer>(check);
  }
}

// Engine DEFAULT in bf16: first layers keep its float choice (LeNet's conv1:
// the reference body; a 3-channel layer: bf16 forward, and a backward pass
// with the bottom gradient on the float reference body, matching it), and so
// do channels that oneDNN's blocks would mostly pad (LeNet's conv2: the
// reference body); other layers run bf16.
TEST(DnnlConvolutionLayerTest, Bf16DefaultKeepsFloatOnFirstLayersAndMostlyPaddedChannels) {
  if (!DnnlHasBf16()) GTEST_SKIP() << "this CPU has no avx512_bf16: BF16 layers compute in float";
  struct Case {
    int in, out;
    bool bf16;
  };
  for (const Case& c :
       {Case{1, 20, false}, Case{3, 64, true}, Case{20, 50, false}, Case{32, 48, true}}) {
    SCOPED_TRACE(testing::Message() << c.in << " -> " << c.out << " channels");
    LayerParameter param;
    ReadProtoFromString(
        "name: 'conv' type: 'Convolution' compute_precision: BF16 "
        "convolution_param { num_output: " +
            std::to_string(c.out) + " kernel_size: 5 }",
        "layer", &param);
    Blob<float> bottom(std::vector<int>{2, c.in, 12, 12}), top;
    std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
    DnnlConvolutionLayer<float> layer(param);
    layer.SetUp(bottom_vec, top_vec);
    EXPECT_EQ(layer.uses_bf16(), c.bf16);
  }
  // The 3-channel layer: its backward pass with the bottom gradient is the
  // float reference body's, to the bit.
  LayerParameter param;
  ReadProtoFromString(
      "name: 'conv' type: 'Convolution' compute_precision: BF16 convolution_param { "
      "num_output: 64 kernel_size: 3 weight_filler { type: 'gaussian' std: 0.3 } }",
      "layer", &param);
  Blob<float> bottom(std::vector<int>{2, 3, 9, 9}), ref_top, bf16_top;
  GaussianFill(&bottom, 1.0f);
  Blob<float> ref_bottom;
  ref_bottom.CopyFrom(bottom, false, true);
  std::vector<Blob<float>*> bf16_bottom_vec{&bottom}, ref_bottom_vec{&ref_bottom},
      ref_vec{&ref_top}, bf16_vec{&bf16_top};
  ConvolutionLayer<float> reference(param);
  DnnlConvolutionLayer<float> layer(param);
  reference.SetUp(ref_bottom_vec, ref_vec);
  layer.SetUp(bf16_bottom_vec, bf16_vec);
  for (int b = 0; b < 2; ++b) layer.blobs()[b]->CopyFrom(*reference.blobs()[b]);
  reference.Forward(ref_bottom_vec, ref_vec);
  layer.Forward(bf16_bottom_vec, bf16_vec);
  EXPECT_LT(MaxDifference(ref_top.cpu_data(), bf16_top.cpu_data(), ref_top.count()), 0.1f);
  GaussianFill(&ref_top, 1.0f);
  bf16_top.CopyFrom(ref_top);
  for (Blob<float>* top : {&ref_top, &bf16_top}) {
    std::copy_n(top->cpu_data(), top->count(), top->mutable_cpu_diff());
  }
  reference.Backward(ref_vec, {true}, ref_bottom_vec);
  layer.Backward(bf16_vec, {true}, bf16_bottom_vec);
  EXPECT_EQ(MaxDifference(ref_bottom.cpu_diff(), bottom.cpu_diff(), bottom.count()), 0.0f);
  EXPECT_EQ(MaxDifference(reference.blobs()[0]->cpu_diff(), layer.blobs()[0]->cpu_diff(),
                          reference.blobs()[0]->count()),
            0.0f);
}

// The switch: the same layer in BF16 runs bf16 kernels (its top differs from
// the float layer's, by bf16's rounding only) and in FLOAT the float ones.
TEST(DnnlConvolutionLayerTest, Bf16SwitchChangesTheKernelsOnly) {
  if (!DnnlHasBf16()) GTEST_SKIP() << "this CPU has no avx512_bf16: BF16 layers compute in float";
  ExpectBf16SwitchChangesTheKernelsOnly<DnnlConvolutionLayer>(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 32 kernel_size: 3 "
      "weight_filler { type: 'gaussian' std: 0.1 } }",
      {2, 16, 7, 6});
}

}  // namespace
}  // namespace crema
