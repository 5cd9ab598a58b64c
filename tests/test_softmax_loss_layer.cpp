// SoftmaxWithLoss: the loss by hand for every normalization (with and without
// an ignored label, and the legacy `normalize` flag), over a spatial label
// map, the probabilities top, gradients, SegNet's class weighting, and
// refused labels.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/softmax_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// -log softmax(scores)[label], by hand.
double NegLogSoftmax(const std::vector<double>& scores, int label) {
  double sum = 0;
  for (double s : scores) sum += std::exp(s);
  return -std::log(std::exp(scores[label]) / sum);
}

void ExpectErrorMentioning(const std::function<void()>& action,
                           const std::vector<std::string>& parts) {
  try {
    action();
    ADD_FAILURE() << "expected crema::Error";
  } catch (const Error& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' missing from: " << e.what();
    }
  }
}

template <typename TypeParam>
class SoftmaxWithLossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Two items, three classes: scores (1, 2, 3) labelled 2 and (1, 1, 1) labelled 0.
  SoftmaxWithLossLayerTest()
      : scores_(std::vector<int>{2, 3}),
        labels_(std::vector<int>{2}),
        bottom_vec_{&scores_, &labels_},
        top_vec_{&loss_} {
    SetValues(&scores_, {1, 2, 3, 1, 1, 1});
    SetValues(&labels_, {2, 0});
  }

  Dtype LossWith(const LayerParameter& param) {
    SoftmaxWithLossLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec_, top_vec_);
    return layer.Forward(bottom_vec_, top_vec_);
  }

  // Scores (2, 3, 2, 2) and a (2, 2, 2) label map with values in [0, 3).
  void MakeSpatial() {
    scores_.Reshape(std::vector<int>{2, 3, 2, 2});
    labels_.Reshape(std::vector<int>{2, 2, 2});
    std::mt19937 rng(1701);
    std::normal_distribution<double> gaussian(0.0, 1.0);
    for (int i = 0; i < scores_.count(); ++i) scores_.mutable_cpu_data()[i] = Dtype(gaussian(rng));
    for (int i = 0; i < labels_.count(); ++i) labels_.mutable_cpu_data()[i] = Dtype(rng() % 3);
  }

  const double item0_ = NegLogSoftmax({1, 2, 3}, 2);
  const double item1_ = NegLogSoftmax({1, 1, 1}, 0);
  Blob<Dtype> scores_, labels_, loss_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(SoftmaxWithLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(SoftmaxWithLossLayerTest, ForwardByHandEveryNormalization) {
  const double sum = this->item0_ + this->item1_;
  LayerParameter param;
  EXPECT_NEAR(this->LossWith(param), sum / 2, 1e-6) << "default (VALID)";
  EXPECT_EQ(this->loss_.num_axes(), 0) << "the loss is a scalar";
  param.mutable_loss_param()->set_normalization(LossParameter::FULL);
  EXPECT_NEAR(this->LossWith(param), sum / 2, 1e-6) << "FULL";
  param.mutable_loss_param()->set_normalization(LossParameter::BATCH_SIZE);
  EXPECT_NEAR(this->LossWith(param), sum / 2, 1e-6) << "BATCH_SIZE";
  param.mutable_loss_param()->set_normalization(LossParameter::NONE);
  EXPECT_NEAR(this->LossWith(param), sum, 1e-5) << "NONE";
}

TYPED_TEST(SoftmaxWithLossLayerTest, IgnoreLabelEveryNormalization) {
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(0);  // drops item 1
  EXPECT_NEAR(this->LossWith(param), this->item0_, 1e-6) << "VALID: one valid item";
  param.mutable_loss_param()->set_normalization(LossParameter::FULL);
  EXPECT_NEAR(this->LossWith(param), this->item0_ / 2, 1e-6) << "FULL";
  param.mutable_loss_param()->set_normalization(LossParameter::BATCH_SIZE);
  EXPECT_NEAR(this->LossWith(param), this->item0_ / 2, 1e-6) << "BATCH_SIZE";
  param.mutable_loss_param()->set_normalization(LossParameter::NONE);
  EXPECT_NEAR(this->LossWith(param), this->item0_, 1e-6) << "NONE";
  // Everything ignored: the normalizer stays 1, the loss 0.
  this->labels_.mutable_cpu_data()[0] = 0;
  param.mutable_loss_param()->set_normalization(LossParameter::VALID);
  EXPECT_EQ(this->LossWith(param), 0);
}

// normalize: true is VALID, false BATCH_SIZE; `normalization` wins when set.
// One item with 4 positions, one ignored, tells them apart (3 vs 1).
TYPED_TEST(SoftmaxWithLossLayerTest, LegacyNormalizeFlag) {
  this->scores_.Reshape(std::vector<int>{1, 2, 4});
  this->labels_.Reshape(std::vector<int>{1, 4});
  SetValues(&this->scores_, {0, 1, 2, 3, 3, 2, 1, 0});  // channel 0, then channel 1
  SetValues(&this->labels_, {0, 1, 1, 7});              // the last one is ignored
  const double sum = NegLogSoftmax({0, 3}, 0) + NegLogSoftmax({1, 2}, 1) + NegLogSoftmax({2, 1}, 1);
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(7);
  param.mutable_loss_param()->set_normalize(true);
  EXPECT_NEAR(this->LossWith(param), sum / 3, 1e-6) << "normalize: true";
  param.mutable_loss_param()->set_normalize(false);
  EXPECT_NEAR(this->LossWith(param), sum, 1e-5) << "normalize: false";
  param.mutable_loss_param()->set_normalization(LossParameter::VALID);
  EXPECT_NEAR(this->LossWith(param), sum / 3, 1e-6) << "normalization overrides normalize";
}

TYPED_TEST(SoftmaxWithLossLayerTest, SpatialLabelsMatchNaiveReference) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeSpatial();
  double sum = 0;
  for (int n = 0; n < 2; ++n) {
    for (int h = 0; h < 2; ++h) {
      for (int w = 0; w < 2; ++w) {
        std::vector<double> scores;
        for (int c = 0; c < 3; ++c) scores.push_back(this->scores_.data_at(n, c, h, w));
        sum += NegLogSoftmax(scores, static_cast<int>(this->labels_.data_at({n, h, w})));
      }
    }
  }
  EXPECT_NEAR(this->LossWith(LayerParameter()), Dtype(sum / 8), 1e-5);
}

TYPED_TEST(SoftmaxWithLossLayerTest, SecondTopHoldsProbabilitiesAndWeighsNothing) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> prob;
  std::vector<Blob<Dtype>*> tops{&this->loss_, &prob};
  SoftmaxWithLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, tops);
  EXPECT_EQ(layer.loss(0), Dtype(1));
  EXPECT_EQ(layer.loss(1), Dtype(0));
  const Dtype loss = layer.Forward(this->bottom_vec_, tops);
  EXPECT_NEAR(loss, (this->item0_ + this->item1_) / 2, 1e-6);
  ASSERT_EQ(prob.shape(), this->scores_.shape());
  const double sum = std::exp(1.) + std::exp(2.) + std::exp(3.);
  const double expected[] = {
      std::exp(1.) / sum, std::exp(2.) / sum, std::exp(3.) / sum, 1. / 3, 1. / 3, 1. / 3};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(prob.cpu_data()[i], expected[i], 1e-6) << i;
}

// R-FCN's third top: each position's -log p before normalizing, 0 where the
// label is ignored, in the label's shape (SoftmaxWithLossOHEM, py-R-FCN's
// name, is the same layer).
TYPED_TEST(SoftmaxWithLossLayerTest, ThirdTopHoldsEachPositionsLoss) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> prob, each;
  std::vector<Blob<Dtype>*> tops{&this->loss_, &prob, &each};
  LayerParameter param;
  param.set_type("SoftmaxWithLossOHEM");
  auto layer = LayerRegistry<Dtype>::CreateLayer(param);
  EXPECT_STREQ(layer->type(), "SoftmaxWithLossOHEM");
  layer->SetUp(this->bottom_vec_, tops);
  EXPECT_EQ(layer->loss(2), Dtype(0));
  layer->Forward(this->bottom_vec_, tops);
  ASSERT_EQ(each.shape(), this->labels_.shape());
  EXPECT_NEAR(each.cpu_data()[0], this->item0_, 1e-6);
  EXPECT_NEAR(each.cpu_data()[1], this->item1_, 1e-6);
  param.mutable_loss_param()->set_ignore_label(0);
  auto ignoring = LayerRegistry<Dtype>::CreateLayer(param);
  ignoring->SetUp(this->bottom_vec_, tops);
  const Dtype loss = ignoring->Forward(this->bottom_vec_, tops);
  EXPECT_NEAR(loss, this->item0_, 1e-6);
  EXPECT_NEAR(each.cpu_data()[0], this->item0_, 1e-6);
  EXPECT_EQ(each.cpu_data()[1], Dtype(0));
}

TYPED_TEST(SoftmaxWithLossLayerTest, ThirdTopRefusesALossWeight) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> prob, each;
  LayerParameter param;
  param.set_name("per_roi_loss_cls");
  for (int i = 0; i < 3; ++i) param.add_loss_weight(i == 2 ? 1 : 0);
  SoftmaxWithLossLayer<Dtype> layer(param);
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, {&this->loss_, &prob, &each},
                          "its loss_weight must be 0");
  // Fewer weights than tops: the one-weight-per-top rule names it.
  LayerParameter one;
  one.set_name("per_roi_loss_cls");
  one.add_loss_weight(1);
  SoftmaxWithLossLayer<Dtype> short_weights(one);
  ExpectSetUpError<Dtype>(&short_weights, this->bottom_vec_, {&this->loss_, &prob, &each},
                          "has 1 loss_weight values for 3");
}

TYPED_TEST(SoftmaxWithLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.add_loss_weight(3);
  SoftmaxWithLossLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype loss = layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(loss, 3 * (this->item0_ + this->item1_) / 2, 1e-5);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  // Item 1 (uniform 1/3, label 0): 3 * (1/3 - 1) / 2 = -1 for class 0.
  EXPECT_NEAR(this->scores_.cpu_diff()[3], -1, 1e-6);
  EXPECT_NEAR(this->scores_.cpu_diff()[4], 0.5, 1e-6);
}

TYPED_TEST(SoftmaxWithLossLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeSpatial();
  SoftmaxWithLossLayer<Dtype> layer{LayerParameter()};
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

// SegNet's class weighting (weight_by_label_freqs with class_weighting):
// each item's loss times its label's weight, divided as before by the
// number of valid items; the gradient likewise; without the flag the
// weights are ignored, as in SegNet.
TYPED_TEST(SoftmaxWithLossLayerTest, SegnetClassWeighting) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  LossParameter* loss = param.mutable_loss_param();
  loss->set_weight_by_label_freqs(true);
  for (double w : {0.5, 2.0, 4.0}) loss->add_class_weighting(w);
  // item 0 is labelled 2 (weight 4), item 1 labelled 0 (weight 0.5).
  EXPECT_NEAR(this->LossWith(param), (4 * this->item0_ + 0.5 * this->item1_) / 2, 1e-5);
  LayerParameter unflagged = param;
  unflagged.mutable_loss_param()->set_weight_by_label_freqs(false);
  EXPECT_NEAR(this->LossWith(unflagged), (this->item0_ + this->item1_) / 2, 1e-6);
  this->MakeSpatial();
  SoftmaxWithLossLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
  LayerParameter short_list = param;
  short_list.mutable_loss_param()->mutable_class_weighting()->RemoveLast();
  SoftmaxWithLossLayer<Dtype> refused(short_list);
  ExpectErrorMentioning([&] { refused.SetUp(this->bottom_vec_, this->top_vec_); },
                        {"class_weighting holds 2 weights for 3 classes"});
}

TYPED_TEST(SoftmaxWithLossLayerTest, GradientIgnoreLabelFullNormalization) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeSpatial();
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(1);
  param.mutable_loss_param()->set_normalization(LossParameter::FULL);
  SoftmaxWithLossLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(SoftmaxWithLossLayerTest, GradientIgnoreLabelValidNormalization) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeSpatial();
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(2);
  SoftmaxWithLossLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

// Label smoothing s over K classes: the target is (1 - s) on the label plus
// s / K on every class, so the loss is (1 - s)(-log p_label) + s / K
// sum_c (-log p_c) and its gradient p - target.
TYPED_TEST(SoftmaxWithLossLayerTest, LabelSmoothingLossAndGradientByHand) {
  using Dtype = typename TypeParam::Dtype;
  const double s = 0.3;
  const std::vector<std::vector<double>> scores{{1, 2, 3}, {1, 1, 1}};
  const int labels[] = {2, 0};
  double expected = 0;
  std::vector<double> gradient;
  for (int n = 0; n < 2; ++n) {
    double sum = 0;
    for (double v : scores[n]) sum += std::exp(v);
    for (int c = 0; c < 3; ++c) {
      const double p = std::exp(scores[n][c]) / sum;
      const double target = (c == labels[n] ? 1 - s : 0) + s / 3;
      expected += -target * std::log(p);
      gradient.push_back((p - target) / 2);  // VALID: 2 items
    }
  }
  expected /= 2;
  LayerParameter param;
  param.mutable_loss_param()->set_label_smoothing(static_cast<float>(s));
  SoftmaxWithLossLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(layer.Forward(this->bottom_vec_, this->top_vec_), expected, 1e-6);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(this->scores_.cpu_diff()[i], gradient[i], 1e-6) << i;
  // Without smoothing the loss is the plain one, larger here than smoothed
  // (the target's mass moved to classes the net already gives some).
  EXPECT_NEAR(this->LossWith(LayerParameter()), (this->item0_ + this->item1_) / 2, 1e-6);
}

TYPED_TEST(SoftmaxWithLossLayerTest, GradientLabelSmoothingWithIgnoredLabel) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeSpatial();
  LayerParameter param;
  param.mutable_loss_param()->set_label_smoothing(0.1f);
  param.mutable_loss_param()->set_ignore_label(1);
  SoftmaxWithLossLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(SoftmaxWithLossLayerTest, LabelSmoothingOutsideItsRangeIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  for (float bad : {-0.1f, 1.0f, 2.0f, std::nanf("")}) {
    LayerParameter param;
    param.set_name("loss");
    param.set_type("SoftmaxWithLoss");
    param.mutable_loss_param()->set_label_smoothing(bad);
    SoftmaxWithLossLayer<Dtype> layer(param);
    ExpectErrorMentioning([&] { layer.SetUp(this->bottom_vec_, this->top_vec_); },
                          {"loss", "label_smoothing", "[0, 1)"});
  }
}

TYPED_TEST(SoftmaxWithLossLayerTest, LabelOutOfRangeNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("loss3");
  for (Dtype bad : {Dtype(3), Dtype(-1)}) {
    this->labels_.mutable_cpu_data()[1] = bad;
    SoftmaxWithLossLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    ExpectErrorMentioning([&] { layer.Forward(this->bottom_vec_, this->top_vec_); },
                          {"loss3", "SoftmaxWithLoss", "label", "[0, 3)"});
  }
}

TYPED_TEST(SoftmaxWithLossLayerTest, LabelCountMismatchNamesBothBlobs) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("loss3");
  this->labels_.Reshape(std::vector<int>{3});
  SoftmaxWithLossLayer<Dtype> layer(param);
  ExpectErrorMentioning(
      [&] { layer.SetUp(this->bottom_vec_, this->top_vec_); },
      {"loss3", "SoftmaxWithLoss", this->scores_.shape_string(), this->labels_.shape_string()});
  // Same number of items, but one label per item where the scores have two
  // positions per item.
  this->scores_.Reshape(std::vector<int>{2, 3, 2});
  this->labels_.Reshape(std::vector<int>{2});
  SoftmaxWithLossLayer<Dtype> spatial(param);
  ExpectErrorMentioning([&] { spatial.SetUp(this->bottom_vec_, this->top_vec_); },
                        {"loss3", this->scores_.shape_string(), this->labels_.shape_string()});
}

TYPED_TEST(SoftmaxWithLossLayerTest, RefusesGradientToLabels) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxWithLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true}, this->bottom_vec_), Error);
  EXPECT_FALSE(layer.AllowForceBackward(1));
  EXPECT_TRUE(layer.AllowForceBackward(0));
}

TYPED_TEST(SoftmaxWithLossLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("SoftmaxWithLoss");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "SoftmaxWithLoss");
}

}  // namespace
}  // namespace crema
