// HingeLoss: L1 and L2 losses and gradients by hand, numerical gradients away
// from the hinge points, and refused labels.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/hinge_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class HingeLossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Margins max(0, 1 - t x): item 0 (label 0): 0.5, 0, 1.2; item 1 (label 2):
  // 2.5, 1.3, 1.5.
  HingeLossLayerTest()
      : scores_(std::vector<int>{2, 3}),
        labels_(std::vector<int>{2}),
        bottom_vec_{&scores_, &labels_},
        top_vec_{&loss_} {
    SetValues(&scores_, {0.5, -2, 0.2, 1.5, 0.3, -0.5});
    SetValues(&labels_, {0, 2});
  }
  LayerParameter Param(HingeLossParameter::Norm norm) {
    LayerParameter param;
    param.set_name("hinge");
    param.mutable_hinge_loss_param()->set_norm(norm);
    return param;
  }
  // Scores (3, 4, 1, 2) (8 classes) kept at least 0.05 from the hinges at +-1.
  void MakeRandom() {
    scores_.Reshape(std::vector<int>{3, 4, 1, 2});
    labels_.Reshape(std::vector<int>{3, 1});
    std::mt19937 rng(1701);
    std::normal_distribution<double> gaussian(0.0, 1.5);
    for (int i = 0; i < scores_.count(); ++i) {
      double x = gaussian(rng);
      if (std::fabs(std::fabs(x) - 1) < 0.05) x *= 1.2;
      scores_.mutable_cpu_data()[i] = Dtype(x);
    }
    SetValues(&labels_, {3, 0, 7});
  }
  Blob<Dtype> scores_, labels_, loss_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(HingeLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(HingeLossLayerTest, ForwardBackwardL1ByHand) {
  using Dtype = typename TypeParam::Dtype;
  HingeLossLayer<Dtype> layer(this->Param(HingeLossParameter::L1));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(layer.Forward(this->bottom_vec_, this->top_vec_), (1.7 + 5.3) / 2, 1e-5);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  // -t / N where the margin is positive.
  const double expected[] = {-0.5, 0, 0.5, 0.5, 0.5, -0.5};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(this->scores_.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(HingeLossLayerTest, ForwardBackwardL2ByHand) {
  using Dtype = typename TypeParam::Dtype;
  HingeLossLayer<Dtype> layer(this->Param(HingeLossParameter::L2));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const double sum = 0.25 + 0 + 1.44 + 6.25 + 1.69 + 2.25;
  EXPECT_NEAR(layer.Forward(this->bottom_vec_, this->top_vec_), sum / 2, 1e-5);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  // -2 t margin / N.
  const double expected[] = {-0.5, 0, 1.2, 2.5, 1.3, -1.5};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(this->scores_.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(HingeLossLayerTest, GradientL1) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeRandom();
  HingeLossLayer<Dtype> layer(this->Param(HingeLossParameter::L1));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(HingeLossLayerTest, GradientL2) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeRandom();
  HingeLossLayer<Dtype> layer(this->Param(HingeLossParameter::L2));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(HingeLossLayerTest, LabelOutOfRangeNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  this->labels_.mutable_cpu_data()[1] = 3;
  HingeLossLayer<Dtype> layer(this->Param(HingeLossParameter::L1));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  try {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    FAIL() << "label 3 of 3 classes must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hinge"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("HingeLoss"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("label 3"), std::string::npos) << e.what();
  }
}

TYPED_TEST(HingeLossLayerTest, LabelCountMismatchNamesBothBlobs) {
  using Dtype = typename TypeParam::Dtype;
  this->labels_.Reshape(std::vector<int>{2, 2});
  HingeLossLayer<Dtype> layer(this->Param(HingeLossParameter::L1));
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "4 labels for 2 items must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hinge"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(this->scores_.shape_string()), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(this->labels_.shape_string()), std::string::npos)
        << e.what();
  }
  this->labels_.Reshape(std::vector<int>{3});
  HingeLossLayer<Dtype> items(this->Param(HingeLossParameter::L1));
  EXPECT_THROW(items.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

TYPED_TEST(HingeLossLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("HingeLoss");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "HingeLoss");
}

}  // namespace
}  // namespace crema
