// Depthwise convolution ("ConvolutionDepthwise", "DepthwiseConvolution"):
// values by hand from weights in Caffe's grouped layout, as a fork's
// .caffemodel brings them; forward and backward equal to a Convolution with
// group = channels on the same weights; gradients against finite differences;
// both type strings; refusals; every device.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/layers/conv_layer.hpp"
#include "crema/layers/depthwise_conv_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class DepthwiseConvolutionLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  DepthwiseConvolutionLayerTest() : bottom_(new Blob<Dtype>(2, 3, 5, 5)), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillGaussian(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(DepthwiseConvolutionLayerTest, TestDtypesAndDevices);

// A depthwise layer of the given type: square kernel, Gaussian weights and bias.
LayerParameter DepthwiseParam(const std::string& type, int num_output, int kernel, int stride = 1,
                              int pad = 0) {
  LayerParameter param;
  param.set_name("conv_dw");
  param.set_type(type);
  ConvolutionParameter* conv = param.mutable_convolution_param();
  conv->set_num_output(num_output);
  conv->add_kernel_size(kernel);
  conv->add_stride(stride);
  conv->add_pad(pad);
  conv->mutable_weight_filler()->set_type("gaussian");
  conv->mutable_bias_filler()->set_type("gaussian");
  return param;
}

// Appends a blob of the given shape and values to param, as a .caffemodel does.
void AddBlob(LayerParameter* param, const std::vector<int>& shape,
             const std::vector<float>& values) {
  BlobProto* blob = param->add_blobs();
  for (int dim : shape) blob->mutable_shape()->add_dim(dim);
  for (float value : values) blob->add_data(value);
}

template <typename Dtype>
std::vector<Dtype> Values(const Blob<Dtype>& blob, bool diff = false) {
  const Dtype* begin = diff ? blob.cpu_diff() : blob.cpu_data();
  return std::vector<Dtype>(begin, begin + blob.count());
}

TYPED_TEST(DepthwiseConvolutionLayerTest, ForwardByHandFromGroupedWeights) {
  using Dtype = typename TypeParam::Dtype;
  // Channel 0 holds 1..9, channel 1 holds 10..18 (3 x 3 each, row by row).
  Blob<Dtype> bottom(1, 2, 3, 3), top;
  SetValues(&bottom, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  LayerParameter param = DepthwiseParam("ConvolutionDepthwise", 2, 2);
  // Output 0 = x0[i][j] + 2 x0[i][j+1] + 1; output 1 = x1[i+1][j+1] - 1.
  AddBlob(&param, {2, 1, 2, 2}, {1, 2, 0, 0, 0, 0, 0, 1});
  AddBlob(&param, {2}, {1, -1});
  DepthwiseConvolutionLayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{1, 2, 2, 2}));
  EXPECT_EQ(Values(top), (std::vector<Dtype>{6, 9, 15, 18, 13, 14, 16, 17}));
}

TYPED_TEST(DepthwiseConvolutionLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  // One channel [1, 2] convolved with a 1 x 1 kernel of weight 3 (no bias):
  // dx = 3 dy, dw = sum x dy, on a top gradient of [1, -1].
  Blob<Dtype> bottom(std::vector<int>{1, 1, 1, 2}), top;
  SetValues(&bottom, {1, 2});
  LayerParameter param = DepthwiseParam("DepthwiseConvolution", 1, 1);
  param.mutable_convolution_param()->set_bias_term(false);
  AddBlob(&param, {1, 1, 1, 1}, {3});
  DepthwiseConvolutionLayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(Values(top), (std::vector<Dtype>{3, 6}));
  top.mutable_cpu_diff()[0] = 1;
  top.mutable_cpu_diff()[1] = -1;
  layer.blobs()[0]->mutable_cpu_diff()[0] = 0;
  layer.Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  EXPECT_EQ(Values(bottom, true), (std::vector<Dtype>{3, -3}));
  EXPECT_EQ(layer.blobs()[0]->cpu_diff()[0], Dtype(-1));
}

// A depthwise layer and a Convolution with group = channels, on the same
// weights, give the same tops and the same gradients, bit for bit.
template <typename Dtype>
void ExpectEqualsGroupedConvolution(const LayerParameter& depthwise_param, Blob<Dtype>* bottom) {
  LayerParameter grouped_param = depthwise_param;
  grouped_param.set_type("Convolution");
  grouped_param.mutable_convolution_param()->set_group(bottom->shape(1));
  DepthwiseConvolutionLayer<Dtype> depthwise(depthwise_param);
  ConvolutionLayer<Dtype> grouped(grouped_param);
  Blob<Dtype> depthwise_top, grouped_top;
  std::vector<Blob<Dtype>*> bottom_vec{bottom};
  std::vector<Blob<Dtype>*> depthwise_top_vec{&depthwise_top}, grouped_top_vec{&grouped_top};
  depthwise.SetUp(bottom_vec, depthwise_top_vec);
  grouped.SetUp(bottom_vec, grouped_top_vec);
  ASSERT_EQ(depthwise.blobs().size(), grouped.blobs().size());
  for (size_t i = 0; i < grouped.blobs().size(); ++i) {
    ASSERT_EQ(depthwise.blobs()[i]->shape(), grouped.blobs()[i]->shape());
    depthwise.blobs()[i]->CopyFrom(*grouped.blobs()[i]);
  }
  EXPECT_EQ(depthwise.blobs()[0]->shape(1), 1) << "Caffe's grouped layout [num_output, 1, k, k]";

  depthwise.Forward(bottom_vec, depthwise_top_vec);
  grouped.Forward(bottom_vec, grouped_top_vec);
  EXPECT_EQ(Values(depthwise_top), Values(grouped_top));

  for (Layer<Dtype>* layer : std::vector<Layer<Dtype>*>{&depthwise, &grouped}) {
    for (auto& blob : layer->blobs()) cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  }
  FillGaussian(&grouped_top);
  cpu_copy(grouped_top.count(), grouped_top.cpu_data(), grouped_top.mutable_cpu_diff());
  cpu_copy(grouped_top.count(), grouped_top.cpu_data(), depthwise_top.mutable_cpu_diff());
  depthwise.Backward(depthwise_top_vec, std::vector<bool>{true}, bottom_vec);
  const std::vector<Dtype> depthwise_bottom_diff = Values(*bottom, true);
  grouped.Backward(grouped_top_vec, std::vector<bool>{true}, bottom_vec);
  EXPECT_EQ(depthwise_bottom_diff, Values(*bottom, true));
  for (size_t i = 0; i < grouped.blobs().size(); ++i) {
    EXPECT_EQ(Values(*depthwise.blobs()[i], true), Values(*grouped.blobs()[i], true)) << i;
  }
}

TYPED_TEST(DepthwiseConvolutionLayerTest, EqualsGroupedConvolution) {
  using Dtype = typename TypeParam::Dtype;
  ExpectEqualsGroupedConvolution<Dtype>(DepthwiseParam("ConvolutionDepthwise", 3, 3, 2, 1),
                                        this->bottom_.get());
}

TYPED_TEST(DepthwiseConvolutionLayerTest, WithChannelMultiplierEqualsGroupedConvolution) {
  using Dtype = typename TypeParam::Dtype;
  ExpectEqualsGroupedConvolution<Dtype>(DepthwiseParam("DepthwiseConvolution", 6, 3, 1, 1),
                                        this->bottom_.get());
}

TYPED_TEST(DepthwiseConvolutionLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(2, 3, 4, 4), top;
  FillGaussian(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  DepthwiseConvolutionLayer<Dtype> layer(DepthwiseParam("ConvolutionDepthwise", 6, 3, 1, 1));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
}

TYPED_TEST(DepthwiseConvolutionLayerTest, BothTypeStringsCreateIt) {
  using Dtype = typename TypeParam::Dtype;
  for (const std::string type : {"ConvolutionDepthwise", "DepthwiseConvolution"}) {
    std::shared_ptr<Layer<Dtype>> layer =
        LayerRegistry<Dtype>::CreateLayer(DepthwiseParam(type, 3, 3));
    EXPECT_STREQ(layer->type(), type.c_str());
    EXPECT_NE(dynamic_cast<DepthwiseConvolutionLayer<Dtype>*>(layer.get()), nullptr) << type;
    layer->SetUp(this->bottom_vec_, this->top_vec_);
    EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int>{3, 1, 3, 3})) << type;
  }
}

TYPED_TEST(DepthwiseConvolutionLayerTest, GroupEqualToChannelsAccepted) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = DepthwiseParam("DepthwiseConvolution", 3, 3);
  param.mutable_convolution_param()->set_group(3);
  DepthwiseConvolutionLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 3, 3, 3}));
}

TYPED_TEST(DepthwiseConvolutionLayerTest, OtherGroupRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = DepthwiseParam("ConvolutionDepthwise", 3, 3);
  param.mutable_convolution_param()->set_group(1);
  DepthwiseConvolutionLayer<Dtype> layer(param);
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_,
                          "group 1 differs from the 3 input channels");
}

TYPED_TEST(DepthwiseConvolutionLayerTest, NumOutputNotMultipleOfChannelsRefused) {
  using Dtype = typename TypeParam::Dtype;
  DepthwiseConvolutionLayer<Dtype> layer(DepthwiseParam("DepthwiseConvolution", 4, 3));
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_,
                          "num_output 4 must be a multiple of the 3 input channels");
}

TYPED_TEST(DepthwiseConvolutionLayerTest, UngroupedWeightsRefused) {
  using Dtype = typename TypeParam::Dtype;
  // A plain Convolution's weights [3, 3, 3, 3] are not a depthwise layer's.
  LayerParameter param = DepthwiseParam("ConvolutionDepthwise", 3, 3);
  param.mutable_convolution_param()->set_bias_term(false);
  AddBlob(&param, {3, 3, 3, 3}, std::vector<float>(81, 1.f));
  DepthwiseConvolutionLayer<Dtype> layer(param);
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_, "weight blob has shape");
}

}  // namespace
}  // namespace crema
