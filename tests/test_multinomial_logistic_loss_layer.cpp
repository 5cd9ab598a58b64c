// MultinomialLogisticLoss: the loss and gradient by hand, the clamp at zero
// probability, numerical gradients, and refused labels.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/multinomial_logistic_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class MultinomialLogisticLossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  MultinomialLogisticLossLayerTest()
      : prob_(std::vector<int>{2, 3}),
        labels_(std::vector<int>{2}),
        bottom_vec_{&prob_, &labels_},
        top_vec_{&loss_} {
    SetValues(&prob_, {0.2, 0.5, 0.3, 0.1, 0.1, 0.8});
    SetValues(&labels_, {1, 2});
  }
  Blob<Dtype> prob_, labels_, loss_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(MultinomialLogisticLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(MultinomialLogisticLossLayerTest, ForwardBackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  MultinomialLogisticLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const double expected_loss = -(std::log(0.5) + std::log(0.8)) / 2;
  EXPECT_NEAR(layer.Forward(this->bottom_vec_, this->top_vec_), expected_loss, 1e-6);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  // -1 / (N p) at the labelled class only.
  const double expected[] = {0, -1 / (2 * 0.5), 0, 0, 0, -1 / (2 * 0.8)};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(this->prob_.cpu_diff()[i], expected[i], 1e-5) << i;
}

// A zero probability for the true class costs -log(1e-20), not infinity.
TYPED_TEST(MultinomialLogisticLossLayerTest, ZeroProbabilityIsClamped) {
  using Dtype = typename TypeParam::Dtype;
  SetValues(&this->prob_, {0.5, 0, 0.5, 0.1, 0.1, 0.8});
  MultinomialLogisticLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const double expected_loss = -(std::log(1e-20) + std::log(0.8)) / 2;
  EXPECT_NEAR(layer.Forward(this->bottom_vec_, this->top_vec_), expected_loss, 1e-4);
}

TYPED_TEST(MultinomialLogisticLossLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  this->prob_.Reshape(std::vector<int>{4, 5, 1, 1});
  this->labels_.Reshape(std::vector<int>{4, 1, 1, 1});
  std::mt19937 rng(1701);
  // Away from 0, where -log p bends too sharply for a 1e-2 step.
  std::uniform_real_distribution<double> uniform(0.3, 1.0);
  for (int i = 0; i < this->prob_.count(); ++i)
    this->prob_.mutable_cpu_data()[i] = Dtype(uniform(rng));
  SetValues(&this->labels_, {4, 0, 2, 2});
  MultinomialLogisticLossLayer<Dtype> layer{LayerParameter()};
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(MultinomialLogisticLossLayerTest, LabelOutOfRangeNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("mlr");
  this->labels_.mutable_cpu_data()[0] = -1;
  MultinomialLogisticLossLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  try {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    FAIL() << "label -1 must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mlr"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MultinomialLogisticLoss"), std::string::npos) << e.what();
  }
}

TYPED_TEST(MultinomialLogisticLossLayerTest, LabelCountMismatchNamesBothBlobs) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("mlr");
  this->labels_.Reshape(std::vector<int>{3});
  MultinomialLogisticLossLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "3 labels for 2 items must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mlr"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(this->prob_.shape_string()), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(this->labels_.shape_string()), std::string::npos)
        << e.what();
  }
}

TYPED_TEST(MultinomialLogisticLossLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("MultinomialLogisticLoss");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "MultinomialLogisticLoss");
}

// 1.5 read the probability of class 1; -0.5 that of class 0.
TYPED_TEST(MultinomialLogisticLossLayerTest, FractionalLabelNamesTheValue) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("mlr");
  for (Dtype bad : {Dtype(1.5), Dtype(-0.5)}) {
    this->labels_.mutable_cpu_data()[1] = bad;
    MultinomialLogisticLossLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    try {
      layer.Forward(this->bottom_vec_, this->top_vec_);
      ADD_FAILURE() << "label " << bad << " must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("layer 'mlr'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("at position 1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace crema
