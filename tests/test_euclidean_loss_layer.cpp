// EuclideanLoss: the loss by hand, loss weight, gradients to both bottoms, and
// bottoms of different sizes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "crema/layers/euclidean_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class EuclideanLossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  EuclideanLossLayerTest()
      : a_(std::vector<int>{2, 2}),
        b_(std::vector<int>{2, 2}),
        bottom_vec_{&a_, &b_},
        top_vec_{&loss_} {
    SetValues(&a_, {1, 2, 3, 4});
    SetValues(&b_, {0, 2, 1, 1});  // differences 1, 0, 2, 3: squares sum to 14
  }
  Blob<Dtype> a_, b_, loss_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(EuclideanLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(EuclideanLossLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  EuclideanLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(layer.Forward(this->bottom_vec_, this->top_vec_), 14. / (2 * 2), 1e-6);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_NEAR(this->loss_.cpu_data()[0], 3.5, 1e-6);
}

TYPED_TEST(EuclideanLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.add_loss_weight(0.5);
  EuclideanLossLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(layer.Forward(this->bottom_vec_, this->top_vec_), 0.5 * 3.5, 1e-6);
  layer.Backward(this->top_vec_, {true, true}, this->bottom_vec_);
  // 0.5 * (a - b) / N and its negative.
  const double expected[] = {0.25, 0, 0.5, 0.75};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(this->a_.cpu_diff()[i], expected[i], 1e-6) << i;
    EXPECT_NEAR(this->b_.cpu_diff()[i], -expected[i], 1e-6) << i;
  }
}

TYPED_TEST(EuclideanLossLayerTest, GradientToBothBottoms) {
  using Dtype = typename TypeParam::Dtype;
  this->a_.Reshape(std::vector<int>{2, 3, 2, 2});
  this->b_.Reshape(std::vector<int>{2, 12});  // same size per item, other shape
  std::mt19937 rng(1701);
  std::normal_distribution<double> gaussian(0.0, 1.0);
  for (Blob<Dtype>* blob : {&this->a_, &this->b_}) {
    for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = Dtype(gaussian(rng));
  }
  EuclideanLossLayer<Dtype> layer{LayerParameter()};
  EXPECT_TRUE(layer.AllowForceBackward(1));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(EuclideanLossLayerTest, DifferentSizesNameTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("l2");
  this->b_.Reshape(std::vector<int>{2, 3});
  EuclideanLossLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "bottoms of 2 and 3 values per item must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("l2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("EuclideanLoss"), std::string::npos) << e.what();
  }
  this->b_.Reshape(std::vector<int>{4, 1});  // same count, different number of items
  EuclideanLossLayer<Dtype> items(param);
  EXPECT_THROW(items.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

// label_smoothing is SoftmaxWithLoss's; another loss refuses it rather than
// train without it.
TYPED_TEST(EuclideanLossLayerTest, LabelSmoothingIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("l2");
  param.set_type("EuclideanLoss");
  param.mutable_loss_param()->set_label_smoothing(0.1f);
  EuclideanLossLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    ADD_FAILURE() << "expected crema::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'l2'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("label_smoothing is read by SoftmaxWithLoss only"),
              std::string::npos)
        << e.what();
  }
}

TYPED_TEST(EuclideanLossLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("EuclideanLoss");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "EuclideanLoss");
}

}  // namespace
}  // namespace crema
