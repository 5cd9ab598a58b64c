// SigmoidCrossEntropyLoss: the loss by hand for every normalization (and
// Caffe's BATCH_SIZE default), ignored targets, extreme scores, gradients,
// and mismatched counts.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/sigmoid_cross_entropy_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// -[t log s(x) + (1 - t) log(1 - s(x))], by hand.
double CrossEntropy(double x, double t) {
  const double p = 1 / (1 + std::exp(-x));
  return -(t * std::log(p) + (1 - t) * std::log(1 - p));
}

template <typename TypeParam>
class SigmoidCrossEntropyLossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  SigmoidCrossEntropyLossLayerTest()
      : scores_(std::vector<int>{2, 2}),
        targets_(std::vector<int>{2, 2}),
        bottom_vec_{&scores_, &targets_},
        top_vec_{&loss_} {
    SetValues(&scores_, {0, 2, -3, 1});
    SetValues(&targets_, {1, 0, 0, 0.25});
  }
  Dtype LossWith(const LayerParameter& param) {
    SigmoidCrossEntropyLossLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec_, top_vec_);
    return layer.Forward(bottom_vec_, top_vec_);
  }
  double Sum() const {
    return CrossEntropy(0, 1) + CrossEntropy(2, 0) + CrossEntropy(-3, 0) + CrossEntropy(1, 0.25);
  }
  Blob<Dtype> scores_, targets_, loss_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(SigmoidCrossEntropyLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, ForwardByHandEveryNormalization) {
  const double sum = this->Sum();
  LayerParameter param;
  EXPECT_NEAR(this->LossWith(param), sum / 2, 1e-6) << "unset: BATCH_SIZE, as in Caffe";
  param.mutable_loss_param()->set_normalize(true);
  EXPECT_NEAR(this->LossWith(param), sum / 4, 1e-6) << "normalize: true is VALID";
  param.mutable_loss_param()->set_normalization(LossParameter::BATCH_SIZE);
  EXPECT_NEAR(this->LossWith(param), sum / 2, 1e-6) << "BATCH_SIZE";
  param.mutable_loss_param()->set_normalization(LossParameter::VALID);
  EXPECT_NEAR(this->LossWith(param), sum / 4, 1e-6) << "VALID";
  param.mutable_loss_param()->set_normalization(LossParameter::FULL);
  EXPECT_NEAR(this->LossWith(param), sum / 4, 1e-6) << "FULL";
  param.mutable_loss_param()->set_normalization(LossParameter::NONE);
  EXPECT_NEAR(this->LossWith(param), sum, 1e-5) << "NONE";
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, IgnoredTargetsEveryNormalization) {
  this->targets_.mutable_cpu_data()[1] = -1;
  const double sum = this->Sum() - CrossEntropy(2, 0);
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(-1);
  EXPECT_NEAR(this->LossWith(param), sum / 2, 1e-6) << "unset: BATCH_SIZE";
  param.mutable_loss_param()->set_normalization(LossParameter::VALID);
  EXPECT_NEAR(this->LossWith(param), sum / 3, 1e-6) << "VALID";
  param.mutable_loss_param()->set_normalization(LossParameter::FULL);
  EXPECT_NEAR(this->LossWith(param), sum / 4, 1e-6) << "FULL";
  param.mutable_loss_param()->set_normalization(LossParameter::NONE);
  EXPECT_NEAR(this->LossWith(param), sum, 1e-5) << "NONE";
}

// exp(100) overflows a float; the loss of a confident right answer is ~0 and
// of a confident wrong one ~|x|.
TYPED_TEST(SigmoidCrossEntropyLossLayerTest, StableOnLargeScores) {
  SetValues(&this->scores_, {100, -100, 100, -100});
  SetValues(&this->targets_, {1, 0, 0, 1});
  LayerParameter param;
  param.mutable_loss_param()->set_normalization(LossParameter::NONE);
  EXPECT_NEAR(this->LossWith(param), 200, 1e-3);
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(-1);
  this->targets_.mutable_cpu_data()[1] = -1;
  SigmoidCrossEntropyLossLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  // (sigmoid(x) - t) / N, 0 where ignored.
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  const double expected[] = {(sigmoid(0) - 1) / 2, 0, sigmoid(-3) / 2, (sigmoid(1) - 0.25) / 2};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(this->scores_.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  this->scores_.Reshape(std::vector<int>{2, 3, 2, 2});
  this->targets_.Reshape(std::vector<int>{2, 3, 2, 2});
  std::mt19937 rng(1701);
  std::normal_distribution<double> gaussian(0.0, 2.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int i = 0; i < this->scores_.count(); ++i) {
    this->scores_.mutable_cpu_data()[i] = Dtype(gaussian(rng));
    this->targets_.mutable_cpu_data()[i] = Dtype(uniform(rng));
  }
  this->targets_.mutable_cpu_data()[5] = -1;
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(-1);
  param.mutable_loss_param()->set_normalization(LossParameter::VALID);
  SigmoidCrossEntropyLossLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, CountMismatchNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("bce");
  this->targets_.Reshape(std::vector<int>{2, 3});
  SigmoidCrossEntropyLossLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "4 scores with 6 targets must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bce"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("SigmoidCrossEntropyLoss"), std::string::npos) << e.what();
  }
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, RefusesGradientToTargets) {
  using Dtype = typename TypeParam::Dtype;
  SigmoidCrossEntropyLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true}, this->bottom_vec_), Error);
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("SigmoidCrossEntropyLoss");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "SigmoidCrossEntropyLoss");
}

// Targets are probabilities: a class index such as 2, or a -1 meant as
// "ignore" without ignore_label, made a wrong (even negative) loss silently.
TYPED_TEST(SigmoidCrossEntropyLossLayerTest, TargetOutsideZeroOneNamesTheValue) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("bce");
  for (Dtype bad : {Dtype(2), Dtype(-1)}) {
    this->targets_.mutable_cpu_data()[2] = bad;
    SigmoidCrossEntropyLossLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    try {
      layer.Forward(this->bottom_vec_, this->top_vec_);
      ADD_FAILURE() << "target " << bad << " must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("layer 'bce'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("at position 2"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("[0, 1]"), std::string::npos) << e.what();
    }
  }
  param.mutable_loss_param()->set_ignore_label(-1);  // -1 ignored: accepted
  SigmoidCrossEntropyLossLayer<Dtype> ignoring(param);
  ignoring.SetUp(this->bottom_vec_, this->top_vec_);
  ignoring.Forward(this->bottom_vec_, this->top_vec_);
}

}  // namespace
}  // namespace crema
