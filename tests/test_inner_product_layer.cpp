// InnerProduct: forward by hand, transposed weights, other axes, trained
// weights, gradients (with and without bias, transposed), accumulation of
// parameter gradients, and the configurations it refuses.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/layers/inner_product_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter InnerProductParam(int num_output) {
  LayerParameter param;
  param.set_name("fc7");
  param.set_type("InnerProduct");
  InnerProductParameter* ip = param.mutable_inner_product_param();
  ip->set_num_output(num_output);
  ip->mutable_weight_filler()->set_type("gaussian");
  ip->mutable_bias_filler()->set_type("gaussian");
  return param;
}

template <typename TypeParam>
class InnerProductLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  InnerProductLayerTest() : bottom_(new Blob<Dtype>(2, 3, 2, 2)), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillGaussian(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(InnerProductLayerTest, TestDtypesAndDevices);

TYPED_TEST(InnerProductLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3}), top;
  const Dtype input[] = {1, 2, 3, 4, 5, 6};
  std::copy(input, input + 6, bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  InnerProductLayer<Dtype> layer(InnerProductParam(2));
  layer.SetUp(bottom_vec, top_vec);
  ASSERT_EQ(layer.blobs().size(), 2u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{2, 3}));
  EXPECT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{2}));
  const Dtype weights[] = {1, 0, -1, 0.5, 1, 2};
  const Dtype bias[] = {0.1, -0.2};
  std::copy(weights, weights + 6, layer.blobs()[0]->mutable_cpu_data());
  std::copy(bias, bias + 2, layer.blobs()[1]->mutable_cpu_data());
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{2, 2}));
  // Row n of the top: W * bottom row n + b.
  const Dtype expected[] = {1 - 3 + 0.1, 0.5 + 2 + 6 - 0.2, 4 - 6 + 0.1, 2 + 5 + 12 - 0.2};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-5) << i;
}

TYPED_TEST(InnerProductLayerTest, NoBiasHasOneBlobAndAddsNothing) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = InnerProductParam(3);
  param.mutable_inner_product_param()->set_bias_term(false);
  InnerProductLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 1u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{3, 12}));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const Dtype* bottom = this->bottom_->cpu_data();
  const Dtype* weights = layer.blobs()[0]->cpu_data();
  for (int n = 0; n < 2; ++n) {
    for (int j = 0; j < 3; ++j) {
      Dtype expected = 0;
      for (int k = 0; k < 12; ++k) expected += bottom[n * 12 + k] * weights[j * 12 + k];
      EXPECT_NEAR(this->top_->cpu_data()[n * 3 + j], expected, 1e-4) << n << "," << j;
    }
  }
}

TYPED_TEST(InnerProductLayerTest, TransposeMatchesTransposedWeights) {
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayer<Dtype> plain(InnerProductParam(3));
  plain.SetUp(this->bottom_vec_, this->top_vec_);
  plain.Forward(this->bottom_vec_, this->top_vec_);
  std::vector<Dtype> plain_top(this->top_->cpu_data(), this->top_->cpu_data() + 6);

  LayerParameter param = InnerProductParam(3);
  param.mutable_inner_product_param()->set_transpose(true);
  InnerProductLayer<Dtype> transposed(param);
  transposed.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(transposed.blobs()[0]->shape(), (std::vector<int>{12, 3}));
  const Dtype* weights = plain.blobs()[0]->cpu_data();
  Dtype* transposed_weights = transposed.blobs()[0]->mutable_cpu_data();
  for (int j = 0; j < 3; ++j) {
    for (int k = 0; k < 12; ++k) transposed_weights[k * 3 + j] = weights[j * 12 + k];
  }
  transposed.blobs()[1]->CopyFrom(*plain.blobs()[1]);
  transposed.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(this->top_->cpu_data()[i], plain_top[i], 1e-5) << i;
}

// Reference: top[m, j] = sum_k bottom[m, k] * W[j, k] + b[j].
template <typename Dtype>
void ExpectInnerProduct(const Blob<Dtype>& bottom, const Blob<Dtype>& top,
                        InnerProductLayer<Dtype>& layer, int rows, int inner, int outputs) {
  const Dtype* weights = layer.blobs()[0]->cpu_data();
  const Dtype* bias = layer.blobs()[1]->cpu_data();
  for (int m = 0; m < rows; ++m) {
    for (int j = 0; j < outputs; ++j) {
      Dtype expected = bias[j];
      for (int k = 0; k < inner; ++k) {
        expected += bottom.cpu_data()[m * inner + k] * weights[j * inner + k];
      }
      EXPECT_NEAR(top.cpu_data()[m * outputs + j], expected, 1e-4) << m << "," << j;
    }
  }
}

TYPED_TEST(InnerProductLayerTest, AxisVariants) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 4}), top;
  FillGaussian(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};

  LayerParameter last_axis = InnerProductParam(5);
  last_axis.mutable_inner_product_param()->set_axis(-1);
  InnerProductLayer<Dtype> per_row(last_axis);
  per_row.SetUp(bottom_vec, top_vec);
  EXPECT_EQ(per_row.blobs()[0]->shape(), (std::vector<int>{5, 4}));
  per_row.Forward(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{2, 3, 5}));
  ExpectInnerProduct(bottom, top, per_row, 6, 4, 5);

  LayerParameter first_axis = InnerProductParam(2);
  first_axis.mutable_inner_product_param()->set_axis(0);
  InnerProductLayer<Dtype> whole(first_axis);
  whole.SetUp(bottom_vec, top_vec);
  EXPECT_EQ(whole.blobs()[0]->shape(), (std::vector<int>{2, 24}));
  whole.Forward(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{2}));
  ExpectInnerProduct(bottom, top, whole, 1, 24, 2);
}

TYPED_TEST(InnerProductLayerTest, UsesTrainedWeightsIncludingLegacy4D) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1, 2}), top;
  bottom.mutable_cpu_data()[0] = 2;
  bottom.mutable_cpu_data()[1] = -1;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param = InnerProductParam(1);
  // V1 models store the weights as 1 x 1 x N x K and the bias as 1 x 1 x 1 x N.
  BlobProto* weights = param.add_blobs();
  weights->set_num(1);
  weights->set_channels(1);
  weights->set_height(1);
  weights->set_width(2);
  weights->add_data(3);
  weights->add_data(4);
  BlobProto* bias = param.add_blobs();
  bias->mutable_shape()->add_dim(1);
  bias->add_data(0.5);
  InnerProductLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{1, 2}));
  layer.Forward(bottom_vec, top_vec);
  EXPECT_NEAR(top.cpu_data()[0], 2 * 3 - 4 + 0.5, 1e-6);
}

TYPED_TEST(InnerProductLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayer<Dtype> layer(InnerProductParam(3));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(InnerProductLayerTest, GradientNoBias) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = InnerProductParam(3);
  param.mutable_inner_product_param()->set_bias_term(false);
  InnerProductLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(InnerProductLayerTest, GradientTranspose) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = InnerProductParam(3);
  param.mutable_inner_product_param()->set_transpose(true);
  InnerProductLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(InnerProductLayerTest, GradientAxisTwo) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = InnerProductParam(2);
  param.mutable_inner_product_param()->set_axis(2);
  InnerProductLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(InnerProductLayerTest, BackwardAccumulatesParameterGradients) {
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayer<Dtype> layer(InnerProductParam(3));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  cpu_set(this->top_->count(), Dtype(1), this->top_->mutable_cpu_diff());
  for (auto& blob : layer.blobs()) cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  const std::vector<bool> propagate_down{true};
  layer.Backward(this->top_vec_, propagate_down, this->bottom_vec_);
  std::vector<Dtype> bottom_diff_once(this->bottom_->cpu_diff(),
                                      this->bottom_->cpu_diff() + this->bottom_->count());
  std::vector<std::vector<Dtype>> once;
  for (auto& blob : layer.blobs()) {
    once.emplace_back(blob->cpu_diff(), blob->cpu_diff() + blob->count());
  }
  // With all-ones top diffs, the bias gradient is the batch size.
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(once[1][j], 2, 1e-6);
  layer.Backward(this->top_vec_, propagate_down, this->bottom_vec_);
  for (size_t b = 0; b < once.size(); ++b) {
    for (int i = 0; i < layer.blobs()[b]->count(); ++i) {
      EXPECT_NEAR(layer.blobs()[b]->cpu_diff()[i], 2 * once[b][i], 1e-5) << b << ":" << i;
    }
  }
  // The bottom gradient is overwritten, not accumulated.
  for (int i = 0; i < this->bottom_->count(); ++i) {
    EXPECT_NEAR(this->bottom_->cpu_diff()[i], bottom_diff_once[i], 1e-5) << i;
  }
}

TYPED_TEST(InnerProductLayerTest, RefusesAChangedInnerSize) {
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayer<Dtype> layer(InnerProductParam(3));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_->Reshape(std::vector<int>{4, 3, 2, 1});
  try {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    FAIL() << "a bottom with 6 inputs per row must be refused by weights made for 12";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("fc7"), std::string::npos) << message;
    EXPECT_NE(message.find("12"), std::string::npos) << message;
    EXPECT_NE(message.find("6"), std::string::npos) << message;
  }
  // Another batch size with the same inner size is fine.
  this->bottom_->Reshape(std::vector<int>{5, 3, 2, 2});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{5, 3}));
}

TYPED_TEST(InnerProductLayerTest, RefusesTrainedWeightsOfTheWrongShape) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = InnerProductParam(3);
  BlobProto* weights = param.add_blobs();
  weights->mutable_shape()->add_dim(3);
  weights->mutable_shape()->add_dim(10);
  for (int i = 0; i < 30; ++i) weights->add_data(0);
  BlobProto* bias = param.add_blobs();
  bias->mutable_shape()->add_dim(3);
  for (int i = 0; i < 3; ++i) bias->add_data(0);
  InnerProductLayer<Dtype> layer(param);
  ExpectSetUpError(&layer, this->bottom_vec_, this->top_vec_,
                   "expected 3 12 (36), found 3 10 (30)");

  LayerParameter missing_bias = InnerProductParam(3);
  missing_bias.add_blobs()->CopyFrom(param.blobs(0));
  InnerProductLayer<Dtype> one_blob(missing_bias);
  ExpectSetUpError(&one_blob, this->bottom_vec_, this->top_vec_, "expects 2 learnable blobs");
}

TYPED_TEST(InnerProductLayerTest, RefusesBadParameters) {
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayer<Dtype> no_outputs(InnerProductParam(0));
  ExpectSetUpError(&no_outputs, this->bottom_vec_, this->top_vec_, "num_output");
  LayerParameter param = InnerProductParam(3);
  param.mutable_inner_product_param()->set_axis(4);
  InnerProductLayer<Dtype> bad_axis(param);
  ExpectSetUpError(&bad_axis, this->bottom_vec_, this->top_vec_, "axis 4");
}

TYPED_TEST(InnerProductLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(InnerProductParam(2))->type(), "InnerProduct");
}

}  // namespace
}  // namespace crema
